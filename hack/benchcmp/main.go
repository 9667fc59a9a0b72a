// Command benchcmp runs two or more commands alternately, N times each, and prints the
// median, min and max of wall time, CPU time (user+system) and max RSS of each, with the
// ratios of the medians against the first command. Alternating runs in one process keeps
// a noisy shared machine from favouring either side.
//
//	benchcmp -n 10 ours bin/istioctl profile dump demo \
//	    ::: upstream bin/upstream/istioctl manifest generate --set profile=empty
//
// With -setup, a shell command runs before every run, unmeasured, with BENCHCMP_NAME set to
// the subject's name: e.g. an uninstall that gives every install a fresh cluster. With -v,
// every run (warm-ups too) and every setup is printed to stderr as it ends.
//
// It is written here rather than taken from hyperfine because hyperfine reports no max
// RSS or CPU time per command and is not in the Go toolchain this project installs.
package main

import (
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sort"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"
)

type sample struct {
	wall, cpu time.Duration
	rssKiB    int64
}

type subject struct {
	name    string
	argv    []string
	samples []sample
}

func main() {
	n := flag.Int("n", 10, "runs per command")
	warmup := flag.Int("warmup", 1, "unmeasured runs per command first")
	flag.StringVar(&setup, "setup", "", "shell command run, unmeasured, before every run (BENCHCMP_NAME is the subject's name)")
	flag.BoolVar(&verbose, "v", false, "print every run (and its -setup) to stderr as it ends")
	flag.Parse()
	subjects, err := parseSubjects(flag.Args())
	if err != nil || len(subjects) < 1 {
		fmt.Fprintf(os.Stderr, "usage: benchcmp [-n N] NAME CMD ARGS... [::: NAME CMD ARGS...]\n%v\n", err)
		os.Exit(2)
	}
	for i := 0; i < *warmup; i++ {
		for _, s := range subjects {
			if _, err := runOnce(s.name+" warm-up", s.argv); err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", s.name, err)
				os.Exit(1)
			}
		}
	}
	for i := 0; i < *n; i++ {
		for _, s := range subjects {
			smp, err := runOnce(s.name, s.argv)
			if err != nil {
				fmt.Fprintf(os.Stderr, "%s: %v\n", s.name, err)
				os.Exit(1)
			}
			s.samples = append(s.samples, smp)
		}
	}
	report(os.Stdout, subjects, *n)
}

func parseSubjects(args []string) ([]*subject, error) {
	var out []*subject
	for len(args) > 0 {
		end := len(args)
		for i, a := range args {
			if a == ":::" {
				end = i
				break
			}
		}
		if end < 2 {
			return nil, fmt.Errorf("want NAME CMD ARGS..., got %q", args[:end])
		}
		out = append(out, &subject{name: args[0], argv: args[1:end]})
		if end == len(args) {
			break
		}
		args = args[end+1:]
	}
	return out, nil
}

// setup is -setup; verbose is -v.
var (
	setup   string
	verbose bool
)

func runOnce(name string, argv []string) (sample, error) {
	s, err := measure(name, argv)
	if err == nil && verbose {
		fmt.Fprintf(os.Stderr, "  %s: %s, CPU %s, max RSS %.1f MiB\n", name, ms(s.wall), ms(s.cpu), mib(s.rssKiB))
	}
	return s, err
}

func measure(name string, argv []string) (sample, error) {
	name, _, _ = strings.Cut(name, " warm-up")
	if setup != "" {
		start := time.Now()
		sc := exec.Command("bash", "-c", setup)
		sc.Env = append(os.Environ(), "BENCHCMP_NAME="+name)
		sc.Stdout, sc.Stderr = os.Stderr, os.Stderr
		if err := sc.Run(); err != nil {
			return sample{}, fmt.Errorf("-setup: %v", err)
		}
		if verbose {
			fmt.Fprintf(os.Stderr, "  setup for %s: %s\n", name, ms(time.Since(start)))
		}
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout = io.Discard
	var stderr strings.Builder
	cmd.Stderr = &stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		return sample{}, fmt.Errorf("%v: %v\n%s", argv, err, stderr.String())
	}
	st := cmd.ProcessState
	ru, _ := st.SysUsage().(*syscall.Rusage)
	var rss int64
	if ru != nil {
		rss = ru.Maxrss // KiB on Linux
	}
	return sample{wall: wall, cpu: st.UserTime() + st.SystemTime(), rssKiB: rss}, nil
}

func stats[T int64 | time.Duration](xs []T) (med, lo, hi T) {
	s := append([]T(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2], s[0], s[len(s)-1]
}

func report(w io.Writer, subjects []*subject, n int) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "command\truns\twall median (min-max)\tCPU median (min-max)\tmax RSS median (min-max)\n")
	type meds struct {
		wall, cpu time.Duration
		rss       int64
	}
	var m []meds
	for _, s := range subjects {
		var walls, cpus []time.Duration
		var rss []int64
		for _, x := range s.samples {
			walls, cpus, rss = append(walls, x.wall), append(cpus, x.cpu), append(rss, x.rssKiB)
		}
		wm, wl, wh := stats(walls)
		cm, cl, ch := stats(cpus)
		rm, rl, rh := stats(rss)
		m = append(m, meds{wm, cm, rm})
		fmt.Fprintf(tw, "%s\t%d\t%s (%s-%s)\t%s (%s-%s)\t%.1f MiB (%.1f-%.1f)\n", s.name, n,
			ms(wm), ms(wl), ms(wh), ms(cm), ms(cl), ms(ch), mib(rm), mib(rl), mib(rh))
	}
	tw.Flush()
	for i := 1; i < len(subjects); i++ {
		fmt.Fprintf(w, "%s / %s: wall %.1fx, CPU %.1fx, max RSS %.1fx\n", subjects[i].name, subjects[0].name,
			ratio(m[i].wall, m[0].wall), ratio(m[i].cpu, m[0].cpu), float64(m[i].rss)/float64(max(m[0].rss, 1)))
		// The differences too: a budget in ms and MiB (hack/bench-startup.sh) reads these.
		fmt.Fprintf(w, "%s - %s: wall %+.1fms, CPU %+.1fms, max RSS %+.1f MiB\n", subjects[i].name, subjects[0].name,
			float64(m[i].wall-m[0].wall)/float64(time.Millisecond), float64(m[i].cpu-m[0].cpu)/float64(time.Millisecond),
			mib(m[i].rss-m[0].rss))
	}
}

func ms(d time.Duration) string { return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond)) }
func mib(k int64) float64       { return float64(k) / 1024 }
func ratio(a, b time.Duration) float64 {
	if b <= 0 {
		b = time.Microsecond
	}
	return float64(a) / float64(b)
}
