// Command conformance is the differential test against upstream istioctl (make
// conformance): it runs upstream's and our `manifest generate` on every case of the corpus
// (testdata/conformance), compares the verdicts and, for cases both accept, the objects and
// their fingerprints, records upstream's results for the fast test (go test ./hack/conformance)
// and writes the report (docs/conformance.md). It exits 1 when a case differs from upstream
// in a way the list of deliberate differences does not say.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sync"
)

func main() {
	corpusDir := flag.String("corpus", "testdata/conformance", "the corpus directory")
	upstream := flag.String("upstream", "bin/upstream/istioctl", "upstream istioctl")
	version := flag.String("upstream-version", "", "upstream's version, for the report and the record")
	record := flag.String("record", "testdata/conformance/upstream.json", "write upstream's results here (empty: do not)")
	report := flag.String("report", "docs/conformance.md", "write the report here (empty: do not)")
	run := flag.String("run", "", "only the cases whose ID matches this regular expression (no record, no report)")
	jobs := flag.Int("j", 2, "upstream runs at once")
	cacheDir := flag.String("cache", "", "keep upstream's results in this directory between runs")
	flag.Parse()
	if err := conform(*corpusDir, *upstream, *version, *record, *report, *run, *cacheDir, *jobs); err != nil {
		fmt.Fprintln(os.Stderr, "conformance:", err)
		os.Exit(1)
	}
}

func conform(corpusDir, upstream, version, record, report, run, cacheDir string, jobs int) error {
	corpus, err := LoadCorpus(corpusDir)
	if err != nil {
		return err
	}
	cases := corpus.Cases
	if run != "" {
		re, err := regexp.Compile(run)
		if err != nil {
			return err
		}
		cases = nil
		for _, c := range corpus.Cases {
			if re.MatchString(c.ID) {
				cases = append(cases, c)
			}
		}
		record, report = "", ""
	}
	ctx := context.Background()
	ups, err := runAllUpstream(ctx, upstream, cases, cacheDir, jobs)
	if err != nil {
		return err
	}
	home, err := os.MkdirTemp("", "conformance-home-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(home)
	// our command reads $HOME/.istioctl/config.yaml and ISTIOCTL_* as upstream's would not
	os.Setenv("HOME", home)
	os.Setenv("KUBECONFIG", "/nonexistent")
	var outcomes []Outcome
	bad := 0
	for _, c := range cases {
		ours, err := oursIn(ctx, c)
		if err != nil {
			return err
		}
		o := Judge(corpus, c, ups[c.ID], ours)
		if o.Problem != "" {
			bad++
			fmt.Fprintf(os.Stderr, "FAIL %s: %s\n", c.ID, o.Problem)
			for _, d := range o.Diffs {
				fmt.Fprintf(os.Stderr, "    %s\n", d)
			}
		}
		outcomes = append(outcomes, o)
	}
	if record != "" {
		if err := Record(version, cases, ups).Save(record); err != nil {
			return err
		}
	}
	if report != "" {
		if err := os.WriteFile(report, Report(corpus, version, outcomes), 0o644); err != nil {
			return err
		}
	}
	fmt.Fprintf(os.Stderr, "%d cases, %d conform, %d do not\n", len(cases), len(cases)-bad, bad)
	if bad > 0 {
		return fmt.Errorf("%d cases differ from upstream beyond the listed differences", bad)
	}
	return nil
}

// oursIn runs ours on a case in a fresh directory holding its files.
func oursIn(ctx context.Context, c Case) (Result, error) {
	dir, err := os.MkdirTemp("", "conformance-ours-")
	if err != nil {
		return Result{}, err
	}
	defer os.RemoveAll(dir)
	if err := c.Prepare(dir); err != nil {
		return Result{}, err
	}
	return runOurs(ctx, c, dir)
}

func runAllUpstream(ctx context.Context, bin string, cases []Case, cacheDir string, jobs int) (map[string]Result, error) {
	bin, err := filepath.Abs(bin)
	if err == nil {
		_, err = os.Stat(bin)
	}
	if err != nil {
		return nil, fmt.Errorf("upstream istioctl: %w (make conformance installs it)", err)
	}
	var cached *cache
	if cacheDir != "" {
		cached = &cache{dir: cacheDir, binary: bin}
	}
	var mu sync.Mutex
	out := map[string]Result{}
	var errs []error
	work := make(chan Case)
	var wg sync.WaitGroup
	for range max(jobs, 1) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for c := range work {
				r, ok := cached.get(c)
				var err error
				if !ok {
					r, err = runUpstream(ctx, bin, c)
					if err == nil {
						err = cached.put(c, r)
					}
				}
				mu.Lock()
				if err != nil {
					errs = append(errs, err)
				}
				out[c.ID] = r
				mu.Unlock()
			}
		}()
	}
	for _, c := range cases {
		work <- c
	}
	close(work)
	wg.Wait()
	return out, errors.Join(errs...)
}
