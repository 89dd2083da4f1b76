#!/usr/bin/env python3
"""The facts a plot or report shows of a trace, from the format's own model, never from
tracemount: records, classes (with their counts), and where the format has them its
instructions and din fetches.

  model_facts.py merge FORMAT TRACE STATS_JSON OUT [MODEL_STATS]
      writes OUT: the mount's STATS_JSON with those facts replaced by the model's, so that a
      check reading OUT (plots_check.py data) judges the plots against the model; the rest
      (the plots object's slices and pages, which describe the drawing) stays. TRACE is the
      source file (gzip allowed for CIS501 and Tarmac). MODEL_STATS: for FULL, the
      stats.json full_model.py expect wrote (the model runs from the program, not the trace).
      The models: byu_model, byu12_model (BYU_MODEL, BYU12_MODEL), tt6_expect.py,
      cis501_expect.py, tarmac_expect.py, full_model.py. spixcounts has none here: OUT is
      STATS_JSON, and a line on standard error says so.
  model_facts.py facts FORMAT TRACE [MODEL_STATS]
      prints the model's facts as JSON."""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import cis501_expect  # noqa: E402
import tarmac_expect  # noqa: E402
import tt6_expect  # noqa: E402


def from_c_model(env_name, trace):
    with tempfile.TemporaryDirectory() as d, open(trace, "rb") as f:
        subprocess.run([os.environ[env_name], d, os.path.basename(trace)], stdin=f, check=True)
        return json.load(open(os.path.join(d, "stats.json")))


def facts(fmt, trace, model_stats=None):
    """{"records", "classes", "own": {key: value of stats.json's FORMAT object}}."""
    if fmt in ("byu", "byu12"):
        st = from_c_model("BYU_MODEL" if fmt == "byu" else "BYU12_MODEL", trace)
        return {"records": st["records"], "classes": st["classes"],
                "own": {"din": st[fmt]["din"]} if "din" in st.get(fmt, {}) else {}}
    if fmt in ("tt6", "tt6e"):
        recs, errs, trunc = tt6_expect.reference_decode(tt6_expect.read(trace), fmt)
        top, own = tt6_expect.expected_stats(recs, os.path.getsize(trace), trace, fmt,
                                             len(errs), trunc)
        top = dict(top)
        return {"records": top["records"], "classes": top["classes"],
                "own": {k: own[k] for k in ("instructions", "din")}}
    if fmt == "cis501":
        records, _, _, _ = cis501_expect.analyse(trace, 4096)
        classes = {t: 0 for t in cis501_expect.FAMILIES + cis501_expect.TAGS}
        for vals, _, _ in records:
            for t in cis501_expect.tags_of(vals) + [cis501_expect.family_of(vals[12])]:
                classes[t] += 1
        return {"records": len(records), "classes": classes, "own": {}}
    if fmt in ("tarmac", "qemu4v"):
        with tempfile.TemporaryDirectory() as d:
            stem = os.path.splitext(os.path.basename(trace))[0]
            tarmac_expect.expect(trace, d, stem, fmt)
            meta = json.load(open(os.path.join(d, "meta.json")))
        if meta["foreign"]:
            raise SystemExit("%s: lines the Tarmac model does not read" % trace)
        st = meta["stats"]
        return {"records": st["records"], "classes": st["classes"], "own": {"din": st["din"]}}
    if fmt == "full":
        st = json.load(open(model_stats))
        return {"records": st["records"], "classes": st["classes"],
                "own": {"instructions": st["full"]["instructions"]}}
    return None


def merge(fmt, trace, stats_path, out, model_stats=None):
    st = json.load(open(stats_path))
    f = facts(fmt, trace, model_stats)
    if f is None:
        sys.stderr.write("model_facts.py: no model of %s here: %s's facts are stats.json's\n"
                         % (fmt, trace))
    else:
        st["records"] = f["records"]
        # the model's classes, in the mount's order (a class the model lacks stays missing)
        st["classes"] = {k: f["classes"].get(k) for k in st["classes"]} | {
            k: v for k, v in f["classes"].items() if k not in st["classes"]}
        own = st.setdefault(fmt, {})
        for k in ("instructions", "din"):
            if k in own:
                own[k] = f["own"].get(k)
    with open(out, "w") as fh:
        json.dump(st, fh, indent=2)


if __name__ == "__main__":
    if sys.argv[1] == "merge":
        merge(*sys.argv[2:7])
    elif sys.argv[1] == "facts":
        print(json.dumps(facts(*sys.argv[2:5])))
    else:
        sys.exit(__doc__)
