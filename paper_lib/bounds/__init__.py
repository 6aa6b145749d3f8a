"""The bounds wing: what a fixed state can hold at most, and the resource model that makes the
question meaningful (in exact arithmetic a fixed bank loses nothing).

- :mod:`.noise_budget`: the resource model, Gaussian noise per state number per step, at unit scale;
- :mod:`.update_bound`: the Bayes bound of the paper's one-hot bank on key-update recall (closed form
  over the hypotheses, Monte-Carlo over sequences), beside the Bayes reader told nothing;
- :mod:`.bank_family`: that bound maximised over a stated family of fixed-decay banks;
- :mod:`.update_oracle`: the MLP oracle of the one-hot bank, fitted on fresh sequences until flat;
- :mod:`.oracle`: the trace oracle of associative recall and the lag oracle (MLP readers per lag);
- :mod:`.fresh_oracle`: the lag oracle fed fresh grammar documents, and the bank's closed-form decoder.

An oracle fitted until flat bounds what a state holds from below (what it reads, the state holds);
a bound in closed form bounds it from above. Our design: the paper is silent.
"""
