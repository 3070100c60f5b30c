"""What the dashboard's pages share, one module per concern; a page imports the names it uses
from the modules that hold them:

* :mod:`~pages._shared.formatting`: the sliders' grid; how values, tables, downloads and file
  names are written.
* :mod:`~pages._shared.server`: the job slots every session shares; the error boundary.
* :mod:`~pages._shared.data`: the current data set (samples, uploads, shared links).
* :mod:`~pages._shared.state`: the sidebar's settings, the URL, moving between pages.
* :mod:`~pages._shared.questions`: the typed questions pages ask (a
  :class:`~pages._shared.questions.Spec`, a :class:`~pages._shared.questions.Scheme`, ...) and
  how Streamlit's caches hash them beside a data set.
* :mod:`~pages._shared.cache`: the compute layer, the only place the dashboard starts expensive
  work: ``@heavy`` functions answer the questions from :mod:`sblr` (cached, in a job slot);
  :mod:`~pages._shared.long_jobs` holds the jobs of seconds to minutes (Tune, stability,
  Compare), :mod:`~pages._shared.stores` the store for work that draws its own progress.
* :mod:`~pages._shared.lesson`, :mod:`~pages._shared.report`, :mod:`~pages._shared.sharing`:
  the lesson's steps, the analysis report, the store behind data links.
* :mod:`~pages._shared.views`: what a page shows (numbers, tables, texts), computed by a
  view function of its questions without drawing; :mod:`~pages._shared.whatif`: Explain's
  what-if editor.

Pages read the session through ``state.page_context`` (``shell.main``, run by app.py, draws
the sidebar first) and get their numbers from the cached functions.  Model logic belongs in
:mod:`sblr`; what is here draws, remembers, or caches.  The folder's name starts with "_"
so that neither a reader nor Streamlit takes it for a page.
"""
