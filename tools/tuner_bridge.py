#!/usr/bin/env python3
"""The tuner bridge: a Python tuning library driven by attune, one JSON object
per line each way (requests on stdin, answers on stdout; anything the
libraries log goes to stderr, which attune keeps for its error messages).

Methods (--method):
  tpe  Optuna's TPE sampler (ask/tell), every dimension a categorical parameter.
  xgb  DeepSpeed Autotuning's model-based tuner: an XGBoost ranking model
       (rank:pairwise, depth 3, eta 0.3) fitted on the measured trials, the
       next trial the model's best unmeasured setting (a random one with
       probability 0.2; random while fewer than 2 trials are known).

Requests and answers:
  (on start)                      -> {"ready": true, "method": m, "versions": {...}}
                                     or {"ready": false, "error": e, "missing_module": name}, exit 3
  {"op": "study", "seed": s, "space": [{"name": n, "choices": [..]}, ..],
   "trials": [{"params": {n: v}, "state": "complete", "value": x}
              | {"params": {..}, "state": "pruned"}, ..]}
                                  -> {"ok": true, "trials": k}   (a fresh study from these trials)
  {"op": "ask"}                   -> {"ok": true, "id": i, "params": {n: v}}
                                     or {"ok": false, "exhausted": true, "error": e}
  {"op": "tell", "id": i, "state": "complete", "value": x | "state": "pruned"}
                                  -> {"ok": true}
  {"op": "quit"}                  -> {"ok": true}, then exit 0 (end of input too)
A request that cannot be served answers {"ok": false, "error": e}.

"pruned" is how attune reports a run that failed (or a setting that cannot
run): TPE ranks a PRUNED trial below every completed one, so it learns to
avoid it (a FAIL trial it ignores and proposes again); the xgb method counts
it as throughput 0, as DeepSpeed does with a failed experiment.
"""

import argparse
import itertools
import json
import random
import sys

# Settings of DeepSpeed Autotuning's model-based tuner (model_based_tuner.py, cost_model.py).
XGB_INIT_TRIALS = 2
XGB_RANDOM_EXPLORATION = 0.2
XGB_PARAMS = {"max_depth": 3, "gamma": 0.0001, "min_child_weight": 1, "subsample": 1.0, "eta": 0.3,
              "lambda": 1.0, "alpha": 0, "objective": "rank:pairwise", "verbosity": 0}
# Candidate settings the xgb model ranks: the whole grid when it is this small,
# else every one-change neighbour of a known trial and this many random ones.
XGB_FULL_GRID = 20000
XGB_RANDOM_POOL = 2000


def send(obj):
    sys.stdout.write(json.dumps(obj, separators=(",", ":")) + "\n")
    sys.stdout.flush()


def key_of(params, names):
    return tuple(params[n] for n in names)


class TpeStudy:
    """An Optuna study rebuilt from the trials attune knows, asked and told."""

    def __init__(self, optuna, seed, space, trials):
        self.optuna = optuna
        self.dists = {d["name"]: optuna.distributions.CategoricalDistribution(d["choices"]) for d in space}
        sampler = optuna.samplers.TPESampler(seed=seed)
        self.study = optuna.create_study(direction="maximize", sampler=sampler)
        for t in trials:
            self.study.add_trial(optuna.trial.create_trial(
                params=t["params"], distributions=self.dists, state=self._state(t["state"]),
                value=t.get("value") if t["state"] == "complete" else None))

    def _state(self, name):
        states = self.optuna.trial.TrialState
        if name == "complete":
            return states.COMPLETE
        if name == "pruned":
            return states.PRUNED
        raise ValueError("unknown state '%s' (expected complete or pruned)" % name)

    def ask(self):
        trial = self.study.ask(fixed_distributions=self.dists)
        return trial.number, trial.params

    def tell(self, trial_id, state, value):
        if state == "complete":
            self.study.tell(trial_id, value)
        else:
            self.study.tell(trial_id, state=self._state(state))


class XgbStudy:
    """DeepSpeed's model-based tuner over the candidate settings."""

    def __init__(self, xgb, numpy, seed, space, trials):
        self.xgb, self.np = xgb, numpy
        self.names = [d["name"] for d in space]
        self.choices = {d["name"]: d["choices"] for d in space}
        self.codes = {n: {v: self._code(v, c) for v in c} for n, c in self.choices.items()}
        self.rng = random.Random(seed)
        self.seed = seed
        self.known = []     # (params, value or None for pruned)
        self.visited = set()
        self.asked = {}     # id -> params
        self.next_id = len(trials)
        for t in trials:
            self._record(t["params"], t.get("value") if t["state"] == "complete" else None)
        self.pool = self._pool()
        self.pool_keys = [key_of(p, self.names) for p in self.pool]
        self.pool_x = numpy.array([self._features(p) for p in self.pool], dtype=numpy.float32)

    def _record(self, params, value):
        self.known.append((params, value))
        self.visited.add(key_of(params, self.names))

    def _pool(self):
        sizes = [len(self.choices[n]) for n in self.names]
        grid = 1
        for s in sizes:
            grid *= s
        if grid <= XGB_FULL_GRID:
            return [dict(zip(self.names, values)) for values in itertools.product(*(self.choices[n] for n in self.names))]
        pool, seen = [], set()

        def offer(params):
            k = key_of(params, self.names)
            if k not in seen:
                seen.add(k)
                pool.append(params)

        for params, _ in self.known:
            for n in self.names:
                for v in self.choices[n]:
                    if v != params[n]:
                        offer(dict(params, **{n: v}))
        draws = self.np.random.RandomState(self.seed).randint(0, sizes, size=(XGB_RANDOM_POOL, len(self.names)))
        for row in draws.tolist():
            offer({n: self.choices[n][i] for n, i in zip(self.names, row)})
        return pool

    @staticmethod
    def _code(value, choices):
        # Numeric values as numbers (DeepSpeed flattens a config to its numbers), others by their index.
        try:
            return float(value)
        except (TypeError, ValueError):
            return float({"false": 0, "true": 1}.get(value, choices.index(value)))

    def _features(self, params):
        return [self.codes[n][params[n]] for n in self.names]

    def ask(self):
        open_ = [i for i, k in enumerate(self.pool_keys) if k not in self.visited]
        if not open_:
            return None
        if len(self.known) < XGB_INIT_TRIALS or self.rng.random() < XGB_RANDOM_EXPLORATION:
            params = self.pool[self.rng.choice(open_)]
        else:
            params = self.pool[open_[self._best(open_)]]
        trial_id = self.next_id
        self.next_id += 1
        self.asked[trial_id] = params
        self.visited.add(key_of(params, self.names))
        return trial_id, params

    def _best(self, candidates):
        """Which of the candidates (indices into the pool) the model ranks first."""
        np = self.np
        xs = np.array([self._features(p) for p, _ in self.known], dtype=np.float32)
        ys = np.array([v if v is not None else 0.0 for _, v in self.known], dtype=np.float32)
        ys = ys / max(float(ys.max()), 1e-9)
        order = np.random.RandomState(self.seed).permutation(len(xs))
        params = dict(XGB_PARAMS, seed=self.seed, nthread=1)
        model = self.xgb.train(params, self.xgb.DMatrix(xs[order], ys[order], nthread=1))
        scores = model.predict(self.xgb.DMatrix(self.pool_x[candidates], nthread=1))
        return int(np.argmax(scores))  # the first of equal scores: the pool's order

    def tell(self, trial_id, state, value):
        params = self.asked.pop(trial_id)
        self.known.append((params, value if state == "complete" else None))


def load(method):
    """The method's modules and their versions, or the name of the one missing."""
    try:
        if method == "tpe":
            import optuna
            optuna.logging.set_verbosity(optuna.logging.WARNING)
            return {"optuna": optuna}, {"optuna": optuna.__version__}
        import numpy
        import xgboost
        return {"xgb": xgboost, "numpy": numpy}, {"xgboost": xgboost.__version__, "numpy": numpy.__version__}
    except ImportError as e:
        send({"ready": False, "missing_module": getattr(e, "name", None) or str(e),
              "error": "%s (python %s at %s)" % (e, sys.version.split()[0], sys.executable)})
        sys.exit(3)


def make_study(method, modules, request):
    seed, space, trials = int(request["seed"]) % 2**32, request["space"], request.get("trials", [])
    if method == "tpe":
        return TpeStudy(modules["optuna"], seed, space, trials)
    return XgbStudy(modules["xgb"], modules["numpy"], seed, space, trials)


def serve(method, modules):
    study = None
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            op = request.get("op")
            if op == "quit":
                send({"ok": True})
                return
            if op == "study":
                study = make_study(method, modules, request)
                send({"ok": True, "trials": len(request.get("trials", []))})
            elif study is None:
                send({"ok": False, "error": "'%s' before 'study'" % op})
            elif op == "ask":
                asked = study.ask()
                if asked is None:
                    send({"ok": False, "exhausted": True, "error": "every candidate setting has been tried"})
                else:
                    send({"ok": True, "id": asked[0], "params": asked[1]})
            elif op == "tell":
                study.tell(int(request["id"]), request["state"], request.get("value"))
                send({"ok": True})
            else:
                send({"ok": False, "error": "unknown op '%s'" % op})
        except Exception as e:  # one bad request is answered, not fatal
            send({"ok": False, "error": "%s: %s" % (type(e).__name__, e)})


def main():
    parser = argparse.ArgumentParser(description="attune's tuner bridge (JSON lines on stdin/stdout)")
    parser.add_argument("--method", choices=["tpe", "xgb"], required=True)
    args = parser.parse_args()
    modules, versions = load(args.method)
    send({"ready": True, "method": args.method, "versions": versions})
    serve(args.method, modules)


if __name__ == "__main__":
    main()
