"""The pages' views: what a page shows, computed without drawing it.

A view function takes the page's typed questions (the data set, the sidebar's
:class:`~pages._shared.state.Settings`, a :class:`~pages._shared.questions.Spec`, the choices of
the page's widgets), asks the compute layer (:mod:`pages._shared.cache`) for the cached results,
and returns a small frozen dataclass of the numbers, tables and texts the page shows. The page
is then a thin script of widgets and ``st.*`` calls on that value; tests call the view functions
directly, without AppTest (``tests/test_views.py``). Figures come from :mod:`sblr.plots`, the
model's logic from :mod:`sblr`; nothing here draws.

* :mod:`~pages._shared.views.coefficients`: the Coefficients β page.
* :mod:`~pages._shared.views.compare`: the Compare methods page.
* :mod:`~pages._shared.views.contributions`: the Class contributions page.
* :mod:`~pages._shared.views.explain`: the Explain a prediction page.
* :mod:`~pages._shared.views.model`: the Model & metrics page.
"""
