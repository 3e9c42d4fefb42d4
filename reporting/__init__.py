"""The paper's tables and figures rebuilt from run records (Peters et al. 2018, Tables 1-3 and 7,
Figures 1-2, the probes of Tables 5-6): ``report`` (the command), ``cell_rules`` (which records share
a cell), ``figures`` (the published values come from ``experiments.paper_numbers``), and the side reports
(``compare_tables``, ``setting_sweep``, ``encoders_report``, ``paper_profile``,
``cache_dtype_check``, ``elmo_input_norms``). Speed and cost measurements live in ``benchmarks``."""
