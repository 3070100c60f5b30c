"""sblr dashboard: choose data, then explore SML / SBLR / SparseSBLR page by page.

Run with ``streamlit run app.py``. Streamlit runs this file as the script of every session's
runs (the navigation, the shared sidebar and the home page: :mod:`pages._shared.shell`); and
``streamlit run`` imports it first to find the server it starts: Streamlit's, with the
dashboard's own route beside it (:mod:`pages._shared.routes`: the Playground's plane drawn
at a click, before the page's run).
"""

import streamlit as st

if __name__ == "__main__":  # a session's run
    from pages._shared.shell import main

    main()
else:  # the server (`streamlit run` imports this file as a module)
    from pages._shared.routes import routes

    app = st.App(__file__, routes=routes())
