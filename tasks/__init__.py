"""Task heads fed ELMo (Peters et al. 2018 §4): one folder per task with its reader, model and
metric, and a matching conf/task/<name>.yaml."""
