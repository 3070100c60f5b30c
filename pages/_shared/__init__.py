"""The modules behind :mod:`pages.common`, one per concern (its docstring lists them).

Pages import ``pages.common``, never these modules.  The folder's name starts with "_" so that
neither a reader nor Streamlit takes it for a page.
"""
