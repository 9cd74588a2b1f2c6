set -u
# The mid-M drift of PERF.md entry 18: the two mid-M shapes, 15 repetitions, with the SM clock, power and
# temperature logged every 20 ms beside them (bench.json's rep_t lines the repetitions up with the log).
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,clocks_event_reasons.active --format=csv -lms 20 > $OUT/clocks.csv 2> $OUT/clocks.err &
pid=$!
sleep 1
python3 bench/bench.py --shapes 128x16384x16384,256x16384x16384 --reps 15 --out $OUT > $OUT/bench.log 2>&1; echo rc=$?
kill $pid; sleep 0.5
head -3 $OUT/clocks.csv; wc -l $OUT/clocks.csv; cat $OUT/clocks.err | head -3
grep -E "x .*us" $OUT/bench.log
python3 - "$OUT" <<'PY'
import json, sys, datetime, statistics
out = sys.argv[1]
r = json.load(open(out + "/bench.json"))
rows = []
for line in open(out + "/clocks.csv").read().splitlines()[1:]:
    f = [x.strip() for x in line.split(",")]
    try:
        t = datetime.datetime.strptime(f[0], "%Y/%m/%d %H:%M:%S.%f").timestamp()
        rows.append((t, float(f[1].split()[0]), float(f[3].split()[0]), f[5]))
    except Exception:
        pass
for row in r["rows"]:
    print(f"{row['M']}x{row['N']}x{row['K']}")
    for i in range(len(row["rep_t"]) - 1):
        t0, t1 = row["rep_t"][i], row["rep_t"][i + 1]
        s = [x for x in rows if t0 <= x[0] <= t1]
        clk = f"{min(x[1] for x in s):.0f}-{max(x[1] for x in s):.0f} MHz, {max(x[2] for x in s):.0f} W, {sorted(set(x[3] for x in s))}" if s else "no sample"
        us = {n: v["all_us"][i] for n, v in row["systems"].items()}
        print(f"  rep {i:2d}: f4gemm {us['f4gemm']:7.1f} us  cublaslt_fp8 {us.get('cublaslt_fp8', 0):7.1f} us  | {clk}")
PY
