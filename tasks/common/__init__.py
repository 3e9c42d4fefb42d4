"""What the task folders share (Peters et al. 2018 §3.3, "using biLMs for supervised NLP tasks"): the
model layers every head is built from (``layers``: the ``TaskModel`` contract, the ELMo mixes a head
owns, token embedders, variational dropout), the tokenizer for raw text, and reading the data files
(``text_files``, ``data_files``, ``hub``)."""
