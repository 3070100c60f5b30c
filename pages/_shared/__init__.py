"""What the dashboard's pages share, one module per concern; a page imports the names it uses
from the modules that hold them:

* :mod:`~pages._shared.formatting`: the sliders' grid; how values, tables, downloads and file
  names are written.
* :mod:`~pages._shared.server`: the job slots every session shares; the error boundary.
* :mod:`~pages._shared.data`: the current data set (samples, uploads, shared links).
* :mod:`~pages._shared.state`: the sidebar's settings, the URL, moving between pages.
* :mod:`~pages._shared.cache`: the cached calls into :mod:`sblr` (typed questions: a data set,
  a :class:`~pages._shared.cache.Spec`, a :class:`~pages._shared.cache.Scheme`), the only place
  the dashboard starts expensive work.
* :mod:`~pages._shared.lesson`, :mod:`~pages._shared.report`, :mod:`~pages._shared.sharing`:
  the lesson's steps, the analysis report, the store behind data links.

Pages read the session through ``state.page_context`` (app.py draws the sidebar first) and get
their numbers from the cached functions.  Model logic belongs in :mod:`sblr`; what is here
draws, remembers, or caches.  The folder's name starts with "_" so that neither a reader nor
Streamlit takes it for a page.
"""
