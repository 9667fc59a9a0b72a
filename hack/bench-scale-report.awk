# Turns hack/bench-scale.sh's results (tab-separated: series, size label, size, unit, wall
# ms, wall range, CPU ms, RSS MiB, RSS range; in run order) into the tables and growth
# verdicts of docs/benchmarks-scale.md. Part a is the install series, part b the checks.
function fmt(x) { return x >= 100 ? sprintf("%.0f", x) : sprintf("%.1f", x) }
function part(s) { return s ~ /^install/ ? "a" : "b" }
{
	s = $1; k = ++n[s]
	if (k == 1) order[++nseries] = s
	label[s, k] = $2; size[s, k] = $3; unit[s] = $4
	wall[s, k] = $5; wrange[s, k] = $6; cpu[s, k] = $7; rss[s, k] = $8; rrange[s, k] = $9
	val[s, "wall", k] = $5; val[s, "cpu", k] = $7; val[s, "rss", k] = $8
	p = part(s)
	if (!((p, $2) in haveLabel)) { haveLabel[p, $2] = 1; labels[p, ++nlabels[p]] = $2 }
}

# One table per size: every command of the part at that size, with its ratios to the
# same command at the smallest size.
function tables(p,   li, l, j, s, k, o, m, c) {
	for (li = 1; li <= nlabels[p]; li++) {
		l = labels[p, li]
		printf "### %s\n\n", l
		printf "| command | wall ms, median (min-max) | CPU ms | max RSS MiB, median (min-max) | wall ÷ smallest | RSS ÷ smallest |\n"
		printf "|---|---|---|---|---|---|\n"
		for (j = 1; j <= nseries; j++) {
			s = order[j]
			if (part(s) != p) continue
			for (k = 1; k <= n[s]; k++) {
				if (label[s, k] != l) continue
				printf "| %s | %s %s | %s | %s %s | %.2fx | %.2fx |\n", s, fmt(wall[s, k]), wrange[s, k], fmt(cpu[s, k]), rss[s, k], rrange[s, k], wall[s, k] / wall[s, 1], rss[s, k] / rss[s, 1]
			}
		}
		printf "\n"
		# Upstream against ours, for the commands both have.
		for (j = 1; j <= nseries; j++) {
			s = order[j]
			if (part(s) != p || s !~ /\(upstream\)$/) continue
			o = s; sub(/\(upstream\)$/, "(ours)", o)
			for (k = 1; k <= n[s]; k++) for (m = 1; m <= n[o]; m++)
				if (label[s, k] == l && label[o, m] == l) {
					c = o; sub(/ \(ours\)$/, "", c)
					printf "Upstream ÷ ours, %s: wall %.2fx, CPU %.2fx, max RSS %.2fx.\n\n", c, wall[s, k] / wall[o, m], cpu[s, k] / cpu[o, m], rss[s, k] / rss[o, m]
				}
		}
	}
}

# The growth of each series, per measure (wall, CPU, max RSS). At most linear means both:
# the value per unit of size never rises above the smallest size's (10% noise allowed),
# and, for times, the cost of each added unit does not grow from one step of sizes to the
# next (more than 2x, and by more than a quarter of the largest value): fixed costs
# dominate small sizes and would hide a quadratic term from the first test alone. The
# second test is skipped when the first step's cost is not positive (noise) and for RSS,
# which moves in steps of the garbage collector's heap goal. "flat" when the largest size
# costs under 1.25x the smallest's.
function verdict(s, m, unit, per,   k, last, v1, worst, r, s1, s2, d, marg, out) {
	last = n[s]; v1 = val[s, m, 1]
	if (last < 2) return "one size only"
	worst = 0
	for (k = 2; k <= last; k++) {
		r = (val[s, m, k] / v1) / (size[s, k] / size[s, 1])
		if (r > worst) worst = r
	}
	marg = ""
	for (k = 2; k <= last; k++) {
		d = (val[s, m, k] - val[s, m, k - 1]) / ((size[s, k] - size[s, k - 1]) / per)
		marg = marg (k > 2 ? ", then " : "") fmt(d) unit
		if (k == 2) s1 = d
		s2 = d
	}
	out = sprintf("%.2fx; each added %s %s", val[s, m, last] / v1, perName, marg)
	if (val[s, m, last] / v1 <= 1.25) return out ": flat"
	if (worst > 1.10) return out sprintf(": WORSE than linear (per unit up to %.2fx the smallest size's)", worst)
	if (m != "rss" && last > 2 && s1 > 0 && s2 > 2 * s1 && (s2 - s1) * ((size[s, last] - size[s, last - 1]) / per) > 0.25 * val[s, m, last])
		return out ": WORSE than linear (the cost of each added unit grows)"
	return out (worst <= 1.0 ? ": better than linear" : ": linear")
}

function growth(p, name, per,   j, s, k, sr) {
	perName = name
	printf "| series | sizes (÷ smallest) | wall | CPU | max RSS |\n|---|---|---|---|---|\n"
	for (j = 1; j <= nseries; j++) {
		s = order[j]
		if (part(s) != p) continue
		sr = ""
		for (k = 1; k <= n[s]; k++) sr = sr (k > 1 ? " / " : "") sprintf("%g", size[s, k] / size[s, 1])
		printf "| %s | %s | %s | %s | %s |\n", s, sr, verdict(s, "wall", " ms", per), verdict(s, "cpu", " ms", per), verdict(s, "rss", " MiB", per)
	}
	printf "\n"
}

END {
	tables("a")
	printf "Growth with the number of gateways (each cell: largest ÷ smallest; the cost of each added gateway from one size to the next; the verdict):\n\n"
	growth("a", "gateway", 1)
	printf "## b. verify-install and x precheck on a cluster of growing size\n\n"
	printf "A default install in place, the cluster grown between sizes by hack/scalefill: namespaces scale-NNNN\n"
	printf "with 5 pods each, bound with spec.nodeName to 10 kwok nodes tainted against the scheduler, all Running.\n\n"
	tables("b")
	printf "Growth with the cluster's size (each cell: largest ÷ smallest; the cost of each added 1,000 pods from one size to the next; the verdict):\n\n"
	growth("b", "1,000 pods", 1000)
}
