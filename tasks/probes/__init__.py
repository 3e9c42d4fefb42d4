"""What the biLM layers encode (Peters et al. 2018 §5.3): a POS probe (Table 6) and a word sense
disambiguation probe (Table 5), each run on layer 0 (tokens), every LSTM layer, and a mix."""
