"""CI tests of cuprobe's Python framework companion: the injection
mechanics, run against the stand-in frameworks of tests/py/standins, which
mirror the PyTorch 2.11 API surface the companion calls (plus CuPy 14's
memory pool and JAX 0.11's backend table).

Every program runs in a fresh interpreter with scripts/python first on
PYTHONPATH, as `cuprobe run` arranges, and the companion's test sink
(CUPROBE_FRAMEWORK_SINK) collecting its records as JSON lines.
Run: python3 tests/py/framework_test.py [-v]
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SCRIPTS = os.path.join(ROOT, "scripts", "python")
STANDINS = os.path.join(ROOT, "tests", "py", "standins")
PROG = os.path.join(ROOT, "tests", "py", "framework_prog.py")
JAX_PROG = os.path.join(ROOT, "tests", "py", "jax_pool_prog.py")
MiB = 1 << 20
SEGMENT_KEYS = {"address", "total_size", "allocated_size", "active_size",
                "requested_size", "stream", "segment_type", "pool",
                "is_expandable", "n_blocks", "free_blocks"}
TOP_KEYS = {"allocated_bytes", "reserved_bytes", "active_bytes",
            "inactive_split_bytes", "num_alloc_retries", "num_ooms",
            "largest_free_block", "holes", "expandable_segments",
            "torch_version", "cuda_version", "arch_list"}


def clean_env():
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("CUPROBE_", "STANDIN_", "PYTHON", "LD_PRELOAD"))}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    return env


class CompanionTest(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="cuprobe-fw-")
        self.sink = os.path.join(self.tmp, "sink.jsonl")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def run_py(self, args, companion=True, sink=True, path=(), env=None, exe=None):
        """Run python3 (or exe) ARGS; @return : (rc, stdout, stderr, records)."""
        e = clean_env()
        entries = ([SCRIPTS] if companion else []) + [STANDINS] + list(path)
        e["PYTHONPATH"] = os.pathsep.join(entries)
        if sink:
            e["CUPROBE_FRAMEWORK_SINK"] = self.sink
        e.update(env or {})
        p = subprocess.run([exe or sys.executable] + list(args), env=e, cwd=self.tmp,
                           capture_output=True, text=True, timeout=60)
        records = []
        if os.path.exists(self.sink):
            with open(self.sink) as f:
                records = [json.loads(line) for line in f]
            os.unlink(self.sink)
        return p.returncode, p.stdout, p.stderr, records

    def prog(self, scenario, **kw):
        return self.run_py([PROG, scenario], **kw)

    @staticmethod
    def kinds(records):
        """The records' kinds, attribution's left out (whether it is on by
        default is _attrib.DEFAULT_ON's, tested apart)."""
        return [r["kind"] for r in records if not r["kind"].endswith(".attrib")]

    def write_sitecustomize(self, body):
        d = os.path.join(self.tmp, "theirs")
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "sitecustomize.py"), "w") as f:
            f.write(body)
        return d

    # --- chaining --------------------------------------------------------
    def test_chains_to_existing_sitecustomize_once(self):
        mark = os.path.join(self.tmp, "mark")
        theirs = self.write_sitecustomize(
            "import os\nMARK = 'theirs'\n"
            "open(os.environ['CHAIN_MARK'], 'a').write('ran\\n')\n")
        # A second copy of our directory must neither run twice nor hide theirs.
        copy = os.path.join(self.tmp, "copy")
        shutil.copytree(SCRIPTS, copy)
        code = ("import sitecustomize, torch; print(sitecustomize.MARK); "
                "print(type(torch.cuda.__loader__).__name__, "
                "torch.cuda.__spec__.loader is torch.cuda.__loader__)")
        for companion in (True, False):
            rc, out, err, recs = self.run_py(
                ["-c", code], companion=companion, path=[copy, theirs],
                env={"CHAIN_MARK": mark})
            self.assertEqual((rc, err), (0, ""))
            self.assertEqual(out, "theirs\nSourceFileLoader True\n")
            with open(mark) as f:
                self.assertEqual(f.read(), "ran\n")
            os.unlink(mark)
            attached = [r for r in recs if r["kind"] == "companion.info"
                        and r["data"]["event"] == "attached"]
            # With our directory off the path, only the copy injects.
            self.assertEqual(len(attached), 1, recs)

    def test_chained_error_reported_as_without_cuprobe(self):
        theirs = self.write_sitecustomize("raise ValueError('boom')\n")
        code = "import sys; print('sitecustomize' in sys.modules)"
        with_us = self.run_py(["-c", code], path=[theirs])[:3]
        without = self.run_py(["-c", code], companion=False, path=[theirs])[:3]
        self.assertEqual(with_us, without)
        self.assertIn("ValueError: boom", with_us[2])

    def test_disabled_by_env_still_chains(self):
        mark = os.path.join(self.tmp, "mark")
        theirs = self.write_sitecustomize(
            "import os\nopen(os.environ['CHAIN_MARK'], 'a').write('ran\\n')\n")
        rc, out, err, recs = self.run_py(
            ["-c", "import sys, torch; print(sorted(m for m in sys.modules "
                   "if m.startswith('cuprobe')))"],
            path=[theirs], env={"CHAIN_MARK": mark, "CUPROBE_FRAMEWORK": "0"})
        self.assertEqual((rc, out, recs), (0, "[]\n", []))
        with open(mark) as f:
            self.assertEqual(f.read(), "ran\n")

    # --- passivity -------------------------------------------------------
    def test_nothing_happens_without_torch(self):
        rc, out, err, recs = self.prog("plain")
        self.assertEqual((rc, err, recs), (0, "", []))
        self.assertIn("threads: ['MainThread']\n", out)
        self.assertIn("companion modules: ['cuprobe_companion', "
                      "'cuprobe_companion._hook', 'cuprobe_companion._specdone']\n", out)

    def test_nothing_happens_with_nowhere_to_write(self):
        rc, out, err, recs = self.prog("import", sink=False)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("threads: ['MainThread']\n", out)

    def test_torch_imported_but_cuda_never_initialised(self):
        rc, out, err, recs = self.prog("import")
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("cuda initialised: False", out)
        self.assertNotIn("torch.oom", self.kinds(recs))
        exits = [r["data"] for r in recs if r["kind"] == "torch.exit"]
        self.assertEqual(len(exits), 1)
        self.assertFalse(exits[0]["cuda_initialized"])

    def test_observer_attached_only_at_programs_cuda_init(self):
        rc, out, err, recs = self.prog("frag")
        self.assertIn("init by: program\n", out)
        info = [r["data"] for r in recs if r["kind"] == "companion.info"]
        self.assertEqual([i["event"] for i in info],
                         ["attached", "torch_cuda_init", "exit"])
        self.assertTrue(info[1]["oom_observer"])

    # --- the records -----------------------------------------------------
    def test_oom_record(self):
        rc, out, err, recs = self.prog("frag")
        self.assertEqual((rc, err), (0, ""))
        ooms = [r["data"] for r in recs if r["kind"] == "torch.oom"]
        self.assertEqual(len(ooms), 3)   # two while filling, the request
        oom = ooms[-1]
        self.assertTrue(TOP_KEYS <= set(oom), TOP_KEYS - set(oom))
        self.assertEqual((oom["device"], oom["request_bytes"]), (0, 256 * MiB))
        self.assertEqual(oom["torch_version"], "2.11.0+standin")
        self.assertEqual(oom["cuda_version"], "13.0")
        self.assertIn("sm_90", oom["arch_list"])
        self.assertIs(oom["expandable_segments"], False)
        self.assertEqual((oom["num_ooms"], oom["oom_index"]), (3, 3))
        self.assertEqual(oom["reserved_bytes"], 1 << 30)
        # Fragmentation: half the cache is free, in 6 MiB holes.
        self.assertEqual(oom["free_bytes"], oom["reserved_bytes"] - oom["allocated_bytes"])
        self.assertEqual(oom["largest_free_block"], 6 * MiB)
        self.assertEqual(oom["holes"], oom["free_blocks_count"])
        self.assertGreater(oom["holes"], 50)
        self.assertEqual(len(oom["segments"]), 16)
        for seg in oom["segments"]:
            self.assertEqual(set(seg), SEGMENT_KEYS)
            self.assertEqual(sum(seg["free_blocks"]),
                             seg["total_size"] - seg["allocated_size"])
        self.assertEqual([d["device"] for d in oom["devices"]], [0])

    def test_exit_record(self):
        rc, out, err, recs = self.prog("frag")
        kinds = self.kinds(recs)
        self.assertEqual(kinds[-2:], ["torch.exit", "companion.info"])
        ex = [r["data"] for r in recs if r["kind"] == "torch.exit"][0]
        self.assertTrue(ex["cuda_initialized"])
        self.assertEqual(ex["oom_count"], 3)
        self.assertTrue(TOP_KEYS <= set(ex), TOP_KEYS - set(ex))
        dev = ex["devices"][0]
        self.assertEqual(len(dev["segments"]), 16)
        self.assertEqual(ex["allocated_bytes"], dev["allocated_bytes"])

    def test_periodic_summary(self):
        rc, out, err, recs = self.prog(
            "periodic", env={"CUPROBE_FRAMEWORK_INTERVAL": "0.05", "PROG_SLEEP": "0.6"})
        self.assertEqual((rc, out, err), (0, "slept\n", ""))
        per = [r["data"] for r in recs if r["kind"] == "torch.periodic"]
        self.assertGreaterEqual(len(per), 3)
        last = per[-1]
        self.assertEqual(last["devices"][0]["allocated_bytes"], 80 * MiB)
        self.assertTrue(last["frag"])
        self.assertEqual(last["largest_free_block"], 40 * MiB)
        done = recs[-1]["data"]
        self.assertEqual(done["event"], "exit")
        self.assertGreaterEqual(done["periodic_ticks"], len(per))

    def test_attaches_from_timer_without_lazy_call(self):
        rc, out, err, recs = self.prog(
            "periodic", env={"CUPROBE_FRAMEWORK_INTERVAL": "0.05", "PROG_SLEEP": "0.3",
                             "STANDIN_TORCH_NO_LAZY_CALL": "1"})
        self.assertEqual((rc, out, err), (0, "slept\n", ""))
        events = [r["data"]["event"] for r in recs if r["kind"] == "companion.info"]
        self.assertEqual(events, ["attached", "torch_cuda_init", "exit"])
        self.assertIn("torch.periodic", self.kinds(recs))

    def test_periodic_skips_snapshot_while_history_is_recorded(self):
        rc, out, err, recs = self.prog(
            "periodic", env={"CUPROBE_FRAMEWORK_INTERVAL": "0.05", "PROG_SLEEP": "0.2",
                             "STANDIN_TORCH_HISTORY": "1"})
        per = [r["data"] for r in recs if r["kind"] == "torch.periodic"]
        self.assertTrue(per)
        self.assertFalse(any(p["frag"] for p in per))
        self.assertNotIn("largest_free_block", per[-1])

    def test_cupy_pool(self):
        lib = self.fake_libcuda()
        env = {"CUPROBE_FRAMEWORK_INTERVAL": "0.05", "PROG_SLEEP": "0.3",
               "STANDIN_LIBCUDA": lib}
        rc, out, err, recs = self.prog("cupy", env=env)
        self.assertEqual((rc, out, err), (0, "done cupy\n", ""))
        per = [r["data"] for r in recs if r["kind"] == "cupy.periodic"]
        self.assertTrue(per)
        ex = [r["data"] for r in recs if r["kind"] == "cupy.exit"][0]
        self.assertEqual((ex["used_bytes"], ex["total_bytes"]), (9 * MiB, 12 * MiB))
        # Without libcuda in the process the pool is not touched.
        del env["STANDIN_LIBCUDA"]
        rc, out, err, recs = self.prog("cupy", env=env)
        self.assertEqual(self.kinds(recs), ["companion.info", "cupy.exit", "companion.info"])
        self.assertFalse([r for r in recs if r["kind"] == "cupy.exit"][0]["data"]["cuda_used"])

    def test_jax_memory_stats(self):
        rc, out, err, recs = self.prog("jax", env={"CUPROBE_FRAMEWORK_INTERVAL": "0.05",
                                                   "PROG_SLEEP": "0.2"})
        self.assertEqual((rc, err), (0, ""))
        ex = [r["data"] for r in recs if r["kind"] == "jax.exit"][0]
        self.assertTrue(ex["backends_initialized"])
        self.assertEqual(len(ex["devices"]), 1)   # the CPU device has no stats
        self.assertEqual(ex["devices"][0]["bytes_limit"], (1 << 30) * 3 // 4)
        self.assertTrue([r for r in recs if r["kind"] == "jax.periodic"])

    # --- JAX: XLA's out-of-memory errors and its pool's samples -----------
    def jax_oom(self, scenario, exe=None, env=None):
        """Run jax_pool_prog.py SCENARIO with and without the companion:
        the same output and status.  @return : (rc, out, jax.oom records,
        all records)."""
        on = self.run_py([JAX_PROG, scenario], env=env, exe=exe)
        off = self.run_py([JAX_PROG, scenario], env=dict(env or {}, CUPROBE_FRAMEWORK="0"),
                          exe=exe)
        self.assertEqual(on[:3], off[:3])
        self.assertEqual(off[3], [])
        return on[0], on[1], [r["data"] for r in on[3] if r["kind"] == "jax.oom"], on[3]

    def test_jax_oom_uncaught_recorded_at_exit(self):
        rc, out, ooms, recs = self.jax_oom("uncaught")
        self.assertEqual(rc, 1)
        self.assertEqual(len(ooms), 1, self.kinds(recs))
        o = ooms[0]
        want = "sys.monitoring" if sys.version_info >= (3, 12) else "exit"
        self.assertEqual((o["hook"], o["oom_index"]), (want, 1))
        self.assertEqual(o["type"], "jaxlib.xla_extension.XlaRuntimeError")
        self.assertEqual(o["message"], "RESOURCE_EXHAUSTED: Out of memory while trying to "
                                       "allocate 209715200 bytes.")
        d = o["devices"][0]
        self.assertEqual((d["bytes_in_use"], d["bytes_limit"], d["largest_free_block_bytes"],
                          d["pool_bytes"], d["local_hardware_id"]),
                         (700 * MiB, 768 * MiB, 68 * MiB, 768 * MiB, 0))
        user = o["frames"][o["user_frame"]]
        self.assertEqual((user["file"], user["line"], user["func"]),
                         (JAX_PROG, jax_line("# OOM"), "arr"))
        self.assertEqual(o["env"], {})
        # Recorded before the exit summary and the exception record.
        kinds = self.kinds(recs)
        self.assertLess(kinds.index("jax.oom"), kinds.index("jax.exit"))
        self.assertIn("exception", kinds)

    def test_jax_oom_records_xla_settings(self):
        env = {"XLA_PYTHON_CLIENT_MEM_FRACTION": ".8", "XLA_PYTHON_CLIENT_PREALLOCATE": "true"}
        rc, out, ooms, recs = self.jax_oom("uncaught", env=env)
        self.assertEqual(ooms[0]["env"], env)
        self.assertEqual(ooms[0]["devices"][0]["bytes_limit"], int((1 << 30) * .8))

    def test_jax_oom_caught_seen_as_raised(self):
        exe = newer_python((3, 12))
        if exe is None:
            self.skipTest("no CPython 3.12 or later: caught OOMs are not seen before it")
        rc, out, ooms, recs = self.jax_oom("frag", exe=exe)
        self.assertEqual(rc, 0)
        self.assertIn("caught: RESOURCE_EXHAUSTED", out)
        # Once, though JAX's API boundary raises it again in another frame.
        self.assertEqual([o["hook"] for o in ooms], ["sys.monitoring"])
        d = ooms[0]["devices"][0]
        self.assertEqual((d["bytes_in_use"], d["largest_free_block_bytes"]),
                         (384 * MiB, 32 * MiB))
        self.assertNotIn("exception", self.kinds(recs))
        # A program's own sys.monitoring tool sees what it sees without us.
        rc, out, ooms, recs = self.jax_oom("sysmon", exe=exe)
        self.assertEqual((rc, len(ooms)), (0, 1))
        self.assertRegex(out, r"own RAISE events: [1-9]")

    def test_jax_oom_watch_takes_a_free_tool_id(self):
        exe = newer_python((3, 12))
        if exe is None:
            self.skipTest("no CPython 3.12 or later")
        rc, out, err, recs = self.run_py([JAX_PROG, "tools"], exe=exe)
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("tools: {3: 'cuprobe'}", out)
        rc, out, err, recs = self.run_py([JAX_PROG, "tools"], exe=exe,
                                         env={"CUPROBE_FRAMEWORK": "0"})
        self.assertIn("tools: {}", out)

    def test_jax_quick_samples(self):
        # The default interval (10 s): between summaries, a sample whenever
        # the pool's numbers changed, looked at every 20 ms or faster: here
        # once a step (40 steps 60 ms apart, each keeping 8 MiB), never
        # twice for one state.
        rc, out, err, recs = self.run_py([JAX_PROG, "growth"], env={"STEP_S": "0.06"})
        self.assertEqual((rc, err), (0, ""))
        per = [r["data"] for r in recs if r["kind"] == "jax.periodic"]
        self.assertTrue(20 <= len(per) <= 41, len(per))
        used = [p["devices"][0]["bytes_in_use"] for p in per]
        self.assertEqual(used, sorted(set(used)))
        ex = [r["data"] for r in recs if r["kind"] == "jax.exit"][0]
        self.assertEqual(ex["samples"], len(per))
        info = [r["data"] for r in recs if r["data"].get("event") == "exit"][0]
        self.assertGreaterEqual(info["quick_samples"], len(per))   # looks, not all written
        # Each names the program's line it was taken at: the loop's sleep,
        # where this program spends its time.
        at = [p["at"]["frames"][0] for p in per if "at" in p]
        self.assertTrue(len(at) >= len(per) - 2, per)
        self.assertEqual({(a["file"], a["line"]) for a in at[1:]},
                         {(JAX_PROG, jax_line("# SLEEP"))})
        self.assertEqual({p["at"]["thread"] for p in per if "at" in p}, {"MainThread"})

    def test_jax_sample_names_the_step_line(self):
        # A jitted step runs no Python of the program's after its first
        # call: the samples of its loop name the line that calls it.
        rc, out, err, recs = self.run_py([JAX_PROG, "train"],
                                         env={"STANDIN_JAX_EXEC_S": "0.001"})
        self.assertEqual((rc, err), (0, ""))
        lines = [p["data"]["at"]["frames"][0]["line"] for p in recs
                 if p["kind"] == "jax.periodic" and "at" in p["data"]]
        self.assertGreater(lines.count(jax_line("# STEP")), len(lines) // 2, lines)

    # --- failure and behaviour -------------------------------------------
    def assert_same_behaviour(self, scenario, env):
        on = self.prog(scenario, env=env)
        off = self.prog(scenario, env=dict(env, CUPROBE_FRAMEWORK="0"))
        self.assertEqual(on[:3], off[:3])
        self.assertEqual(off[3], [])
        return on

    def test_failure_disables_cleanly_with_one_log_line(self):
        for what in ("snapshot", "stats"):
            rc, out, err, recs = self.assert_same_behaviour(
                "frag", {"STANDIN_TORCH_FAIL": what})
            self.assertEqual(rc, 0)
            logs = [r["data"]["text"] for r in recs if r["kind"] == "log"]
            self.assertEqual(len(logs), 1, recs)
            self.assertTrue(logs[0].startswith("companion disabled: torch.oom: "
                                               "RuntimeError: stand-in"), logs)
            self.assertEqual(self.kinds(recs)[-1], "log")   # nothing after it

    def test_exit_status_and_output_unchanged(self):
        rc, out, err, recs = self.assert_same_behaviour("exitcode", {})
        self.assertEqual((rc, out), (3, "leaving with 3\n"))
        self.assertIn("torch.exit", self.kinds(recs))
        rc, out, err, recs = self.assert_same_behaviour("uncaught", {})
        self.assertEqual(rc, 1)
        self.assertIn("OutOfMemoryError", err)
        self.assertIn("torch.oom", self.kinds(recs))

    def test_backward_caller_recorded_and_transparent(self):
        prog = os.path.join(self.tmp, "train.py")
        with open(prog, "w") as f:
            f.write("import torch\n"
                    "torch.cuda.init()\n"
                    "calls = []\n"
                    "print(torch.autograd.backward.__name__)\n"
                    "torch.Tensor('cuda:0', engine=lambda: calls.append(1)).backward()\n"
                    "def boom():\n"
                    "    raise ValueError('from the graph')\n"
                    "try:\n"
                    "    torch.Tensor('cuda:0', engine=boom).backward()\n"
                    "except ValueError as e:\n"
                    "    print('raised', e)\n"
                    "print(len(calls), torch.autograd.backward(torch.Tensor()))\n")
        on = self.run_py([prog])
        off = self.run_py([prog], companion=False)
        self.assertEqual(on[:3], off[:3])
        self.assertEqual(on[1], "backward\nraised from the graph\n1 None\n")
        bw = [r["data"] for r in on[3] if r["kind"] == "torch.backward"]
        self.assertEqual([b["event"] for b in bw], ["begin", "end"] * 3, bw)
        self.assertEqual([(b["file"], b["line"]) for b in bw[::2]],
                         [(prog, 5), (prog, 9), (prog, 12)])
        info = [r["data"] for r in on[3] if r["data"].get("event") == "torch_cuda_init"]
        self.assertTrue(info[0]["backward_caller"], info)

    # --- attribution (_attrib*.py) ----------------------------------------
    def attrib_prog(self, body, name="train.py"):
        """A program file: KEEP and TEMP lines are found by their marks."""
        prog = os.path.join(self.tmp, name)
        with open(prog, "w") as f:
            f.write(body)
        lines = body.splitlines()
        marks = {m: i + 1 for i, line in enumerate(lines)
                 for m in ("KEEP", "TEMP", "WEIGHTS") if line.endswith("# " + m)}
        return prog, marks

    TORCH_LOOP = ("import atexit, sys, time\n"
                  "atexit.register(lambda: print('history at exit:',\n"
                  "                              sys.modules['torch']._C._cuda_isHistoryEnabled()))\n"
                  "import torch\n"
                  "MiB = 1 << 20\n"
                  "torch.cuda.init()\n"
                  "w = torch.cuda._standin_alloc(32 * MiB)  # WEIGHTS\n"
                  "kept = []\n"
                  "def step():\n"
                  "    t = torch.cuda._standin_alloc(12 * MiB)  # TEMP\n"
                  "    torch.cuda._standin_free(t)\n"
                  "    kept.append(torch.cuda._standin_alloc(2 * MiB))  # KEEP\n"
                  "for _ in range(12):\n"
                  "    step()\n"
                  "    time.sleep(0.03)\n"
                  "print('kept', len(kept))\n")

    @staticmethod
    def attrib(records, kind="torch.attrib"):
        return [r["data"] for r in records if r["kind"] == kind]

    @staticmethod
    def stacks(samples):
        out = {}
        for a in samples:
            for st in a.get("stacks", ()):
                out[st["id"]] = st["frames"]
        return out

    def test_attribution_default(self):
        from_env = {"": None, "1": True, "0": False}
        sys.path.insert(0, SCRIPTS)
        try:
            from cuprobe_companion import _attrib
        finally:
            sys.path.remove(SCRIPTS)
        prog, _ = self.attrib_prog(self.TORCH_LOOP)
        for value, want in from_env.items():
            env = {"CUPROBE_ATTRIBUTE": value} if value else {}
            rc, out, err, recs = self.run_py([prog], env=env)
            self.assertEqual((rc, err), (0, ""))
            on = _attrib.DEFAULT_ON if want is None else want
            self.assertEqual(bool(self.attrib(recs)), on, value)
            self.assertIn("history at exit: False\n", out)

    def test_torch_attribution_names_the_keeping_line(self):
        prog, m = self.attrib_prog(self.TORCH_LOOP)
        env = {"CUPROBE_ATTRIBUTE": "1", "CUPROBE_FRAMEWORK_INTERVAL": "0.05"}
        on = self.run_py([prog], env=env)
        off = self.run_py([prog], env=dict(env, CUPROBE_ATTRIBUTE="0"))
        self.assertEqual(on[:3], off[:3])
        self.assertEqual(on[1], "kept 12\nhistory at exit: False\n")
        att = self.attrib(on[3])
        self.assertEqual(att[0]["event"], "on")
        self.assertEqual(att[0]["owner"], "companion")
        self.assertEqual(att[-1]["event"], "end")
        samples = [a for a in att if "sites" in a]
        self.assertGreaterEqual(len(samples), 2)
        self.assertEqual(samples[-1]["event"], "exit")
        stacks = self.stacks(samples)
        # Each stack is written once, with the first sample listing its site.
        ids = [st["id"] for a in samples for st in a["stacks"]]
        self.assertEqual(len(ids), len(set(ids)))
        sites = {stacks[sid][0][1]: (b, n) for sid, b, n in samples[-1]["sites"]}
        self.assertEqual(sites, {m["KEEP"]: (24 * MiB, 12), m["WEIGHTS"]: (32 * MiB, 1)})
        keep = [st for st in stacks.values() if st[0][1] == m["KEEP"]][0]
        self.assertEqual(keep, [[prog, m["KEEP"], "step"], [prog, m["KEEP"] + 2, "<module>"]])
        self.assertEqual(samples[-1]["live_bytes"], 56 * MiB)
        self.assertEqual(samples[-1]["unattributed_bytes"], 0)
        for a in samples:
            self.assertTrue(all(isinstance(v, int) for k, v in a.items()
                                if k not in ("stacks", "sites", "event", "owner")), a)
        # The periodic summary keeps its snapshot: the history is ours.
        per = [r["data"] for r in on[3] if r["kind"] == "torch.periodic"]
        self.assertTrue(per and all(p["frag"] for p in per), per)

    def test_torch_attribution_leaves_the_programs_history(self):
        prog, m = self.attrib_prog(self.TORCH_LOOP)
        rc, out, err, recs = self.run_py(
            [prog], env={"CUPROBE_ATTRIBUTE": "1", "CUPROBE_FRAMEWORK_INTERVAL": "0.05",
                         "STANDIN_TORCH_HISTORY": "1"})
        self.assertEqual((rc, err), (0, ""))
        self.assertIn("history at exit: True\n", out)
        att = self.attrib(recs)
        self.assertEqual(att[0]["owner"], "program")
        # Only at exit: the program's history may be long to convert.
        self.assertEqual([a["event"] for a in att if "sites" in a], ["exit"])

    def test_torch_attribution_off_with_a_reason(self):
        prog, _ = self.attrib_prog(self.TORCH_LOOP)
        cases = {"backend": {"PYTORCH_CUDA_ALLOC_CONF": "backend:cudaMallocAsync"},
                 "failed": {"STANDIN_TORCH_FAIL": "history"}}
        for reason, extra in cases.items():
            env = dict(extra, CUPROBE_ATTRIBUTE="1")
            on = self.run_py([prog], env=env)
            self.assertEqual(on[:3], self.run_py([prog], env=dict(env, CUPROBE_ATTRIBUTE="0"))[:3])
            att = self.attrib(on[3])
            self.assertEqual([a["event"] for a in att], ["off"], att)
            self.assertEqual(att[0]["reason"], reason)
            # The rest of the companion goes on.
            self.assertIn("torch.exit", self.kinds(on[3]))
            self.assertFalse([r for r in on[3] if r["kind"] == "log"])

    def test_torch_attribution_caps_the_sites(self):
        body = ("import torch\ntorch.cuda.init()\nkept = []\n" +
                "".join("kept.append(torch.cuda._standin_alloc(%d << 10))\n" % (i + 1)
                        for i in range(70)))
        prog, _ = self.attrib_prog(body)
        rc, out, err, recs = self.run_py([prog], env={"CUPROBE_ATTRIBUTE": "1"})
        self.assertEqual((rc, err), (0, ""))
        ex = [a for a in self.attrib(recs) if a["event"] == "exit"][0]
        self.assertEqual((len(ex["sites"]), ex["sites_total"]), (64, 70))
        sizes = sorted(b for _, b, _ in ex["sites"])
        # The six smallest (1..6 KiB, rounded to 512 B) are summed, not listed.
        self.assertEqual(sizes[0], 7 << 10)
        self.assertEqual((ex["other_bytes"], ex["other_blocks"]), (21 << 10, 6))
        self.assertEqual(len(ex["stacks"]), 64)

    def test_cupy_attribution_names_the_keeping_line(self):
        prog, m = self.attrib_prog(
            "import threading\n"
            "import cupy\n"
            "MiB = 1 << 20\n"
            "pool = cupy.get_default_memory_pool()\n"
            "keep = []\n"
            "for _ in range(5):\n"
            "    c = pool.malloc(4 * MiB)  # KEEP\n"
            "    t = pool.malloc(4 * MiB)  # TEMP\n"
            "    pool.free(t)\n"
            "    keep.append(c)\n"
            "other = threading.Thread(target=lambda: keep.append(pool.malloc(MiB)))\n"
            "other.start(); other.join()\n"
            "print(len(keep), pool.used_bytes() >> 20)\n")
        on = self.run_py([prog], env={"CUPROBE_ATTRIBUTE": "1"})
        off = self.run_py([prog], env={"CUPROBE_ATTRIBUTE": "0"})
        self.assertEqual(on[:3], off[:3])
        self.assertEqual(on[1], "6 24\n")   # the thread's 1 MiB took a free 4 MiB chunk
        att = self.attrib(on[3], "cupy.attrib")
        self.assertEqual([a["event"] for a in att], ["on", "exit", "end"])
        self.assertEqual(att[0]["thread"], "MainThread")
        ex = att[1]
        stacks = self.stacks([ex])
        # The hook serves the thread that imported cupy: the other thread's
        # megabyte is not counted.
        self.assertEqual([(stacks[sid], b, n) for sid, b, n in ex["sites"]],
                         [([[prog, m["KEEP"], "<module>"]], 20 * MiB, 5)])
        self.assertEqual(ex["live_bytes"], 20 * MiB)


class UnitTest(unittest.TestCase):
    def setUp(self):
        sys.path.insert(0, SCRIPTS)

    def tearDown(self):
        sys.path.remove(SCRIPTS)

    def test_parse_interval(self):
        from cuprobe_companion._core import parse_interval

        cases = {None: 10.0, "": 10.0, "abc": 10.0, "-1": 10.0, "nan": 10.0,
                 "inf": 10.0, "0": 0.0, "2.5": 2.5, " 3 ": 3.0, "4s": 4.0,
                 "0.000001": 0.01}
        for text, want in cases.items():
            self.assertEqual(parse_interval(text), want, text)

    def test_shrink_bounds_a_huge_record(self):
        from cuprobe_companion import _sink, _torch

        seg = {"address": 1, "total_size": 2 * MiB, "allocated_size": MiB,
               "active_size": MiB, "requested_size": MiB, "stream": 0,
               "segment_type": "small", "pool": [0, 0], "is_expandable": False,
               "n_blocks": 3000, "free_blocks": [512] * 1500}
        obj = {"segments": [dict(seg, free_blocks=list(seg["free_blocks"]))
                            for _ in range(3000)]}
        self.assertGreater(len(_sink.encode(obj)), _sink.MAX_JSON_BYTES)
        attempt = 0
        while len(_sink.encode(obj)) > _sink.MAX_JSON_BYTES:
            attempt += 1
            obj = _torch.shrink(obj, attempt)
        self.assertEqual(attempt, 1)
        self.assertTrue(obj["free_blocks_dropped"])
        self.assertEqual(obj["segments"][0]["n_free_blocks"], 1500)

    def test_jax_quick_period(self):
        from cuprobe_companion._others import JaxCollector

        c = JaxCollector(type(sys)("jax"), lambda kind, obj: None, lambda where, fn, *a: fn(*a))
        self.assertEqual(c.quick_period(), c.QUICK_MIN_S)
        c._rising = True                  # the pool fills up: more often
        self.assertEqual(c.quick_period(), c.QUICK_MIN_S / c.QUICK_GROW_DIV)
        c._rising = False
        c.samples = 2 * c.QUICK_BUDGET    # many written: less often, up to QUICK_S
        self.assertEqual(c.quick_period(), 4 * c.QUICK_MIN_S)
        c.samples = 100 * c.QUICK_BUDGET
        self.assertEqual(c.quick_period(), c.QUICK_S)
        c.samples, c._cost_s = 0, 0.01    # a costly look: at most QUICK_DUTY of the time
        self.assertEqual(c.quick_period(), 0.01 / c.QUICK_DUTY)

    def test_jax_quick_sample_only_when_memory_changed(self):
        from cuprobe_companion._others import JaxCollector

        stats = {"bytes_in_use": 1, "bytes_limit": 8, "num_allocs": 1}

        class Dev:
            id, platform, device_kind = 0, "gpu", "stand-in"

            def memory_stats(self):
                return dict(stats)

        class Backend:
            def local_devices(self):
                return [Dev()]

        bridge = type(sys)("jax._src.xla_bridge")
        bridge._backends = {"cuda": Backend()}
        sys.modules["jax._src.xla_bridge"] = bridge
        try:
            out = []
            c = JaxCollector(type(sys)("jax"), lambda kind, obj: out.append(obj),
                             lambda where, fn, *a: fn(*a))
            c.quick()
            stats["num_allocs"] = 2          # a counter: no sample
            c.quick()
            stats["bytes_in_use"] = 2        # memory: a sample
            c.quick()
            c.periodic()                     # the summary: always
            self.assertEqual([(o["tick"], o["devices"][0]["bytes_in_use"]) for o in out],
                             [(0, 1), (0, 2), (1, 2)])
        finally:
            del sys.modules["jax._src.xla_bridge"]

    def test_attribute_switch(self):
        from cuprobe_companion import _attrib

        for text in ("1", "on", "TRUE", " yes "):
            self.assertTrue(_attrib.enabled(text), text)
        for text in ("0", "off", "False", "no"):
            self.assertFalse(_attrib.enabled(text), text)
        for text in ("", "auto", "maybe"):
            self.assertEqual(_attrib.enabled(text), _attrib.DEFAULT_ON, text)

    def test_conf_expandable(self):
        from cuprobe_companion._torch import conf_expandable

        self.assertTrue(conf_expandable("max_split_size_mb:64, expandable_segments:True"))
        self.assertFalse(conf_expandable("expandable_segments:False"))
        self.assertFalse(conf_expandable(""))


def fake_libcuda(self):
    """A do-nothing library whose soname is libcuda.so.1, so that loading it
    makes "libcuda is loaded" true, as a first CUDA call would."""
    path = os.path.join(self.tmp, "libcuda.so.1")
    cc = shutil.which("cc") or shutil.which("gcc")
    if cc is None:
        self.skipTest("no C compiler for the libcuda stand-in")
    src = os.path.join(self.tmp, "libcuda.c")
    with open(src, "w") as f:
        f.write("int cuInit(unsigned flags) { (void)flags; return 0; }\n")
    subprocess.run([cc, "-shared", "-fPIC", "-Wl,-soname,libcuda.so.1", "-o", path, src],
                   check=True)
    return path


CompanionTest.fake_libcuda = fake_libcuda


def jax_line(mark):
    """The line of jax_pool_prog.py that ends with mark."""
    with open(JAX_PROG) as f:
        return next(i for i, line in enumerate(f, 1) if line.rstrip().endswith(mark))


def newer_python(version):
    """A CPython of at least version (sys.executable first, then
    CUPROBE_TEST_PYTHONS, python3.N on PATH, pyenv's), or None."""
    if sys.version_info >= version:
        return sys.executable
    import glob

    found = os.environ.get("CUPROBE_TEST_PYTHONS", "").split()
    found += [shutil.which("python3.%d" % m) for m in range(version[1], 20)]
    found += sorted(glob.glob(os.path.expanduser("~/.pyenv/versions/3.*/bin/python3")))
    for exe in filter(None, found):
        try:
            out = subprocess.run([exe, "-c", "import sys; print(sys.version_info[:2] >= %r)"
                                  % (version,)], capture_output=True, text=True, timeout=30)
        except OSError:
            continue
        if out.stdout.strip() == "True":
            return exe
    return None

if __name__ == "__main__":
    unittest.main()
