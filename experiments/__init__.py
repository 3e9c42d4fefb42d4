"""The run machinery (torchtune's "recipes", apart from what varies, ``conf/``): a run's plan and
identity, where runs live and their records, the runner and the one trainer, the training state,
configuration checks and record migration. ``tasks/`` holds the task contract and the task folders."""
