"""The models: SPEN and the matched Transformer on one causal-LM shell (``lm.py``), SPCN, the GRU
baselines; ``factory.py`` builds a language model by name. A model module imports no experiment.
"""
