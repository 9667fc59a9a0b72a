// Command testfmt formats the event stream of `go test -json`, read from stdin (or from the
// files named as arguments, read side by side: the streams of test binaries that run at the
// same time, such as named pipes), for a long test run that is watched live:
//
//	go test -json -p 1 -timeout 40m ./... 2>&1 | go run ./hack/testfmt -json /tmp/test.json -keep-on-failure
//
// It prints one line per top-level test as it ends, with its seconds (a failing test's
// output before it, a skipped test's reason after it), one line per package as it ends, the
// tests still running when a test binary was killed (-timeout, crash) or the input ended,
// and at the end the slowest tests, the seconds per package and a closing line
// `N passed, N failed, N skipped`. Every line is written as soon as it is known, since the
// run may be killed at any time. Lines that are not JSON are echoed as they are.
//
// Exit status is 1 if a test or package failed or a test was left running, else 0.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"sync"
	"time"
)

const modulePrefix = "github.com/istioctl-installer/istioctl/"

const (
	killedTail = 60   // lines of a killed test's output shown
	maxLines   = 5000 // lines of output kept per test, so a chatty test cannot eat the memory
)

// event is one test2json event. Build output (Go 1.24+) comes as Action "build-output"
// with ImportPath instead of Package.
type event struct {
	Time       time.Time
	Action     string
	Package    string
	Test       string
	Elapsed    float64
	Output     string
	ImportPath string
}

// test is a top-level test still running, with its own and its subtests' output.
type test struct {
	start   time.Time
	output  []string // raw output, each ending in "\n" unless test2json split a long line
	dropped int
}

func (t *test) add(s string) {
	// test2json splits long lines; join the pieces again.
	if n := len(t.output); n > 0 && !strings.HasSuffix(t.output[n-1], "\n") {
		t.output[n-1] += s
		return
	}
	t.output = append(t.output, s)
	if len(t.output) > maxLines {
		t.output = t.output[1:]
		t.dropped++
	}
}

// tail returns the last n lines of output. When the binary panicked on -timeout, the lines
// after the panic are the dump of every goroutine, so the tail ends at the panic line:
// the test's own last logs say more (the full dump stays in the -json file).
func (t *test) tail(n int) []string {
	lines := t.output
	for i, l := range lines {
		if strings.HasPrefix(l, "panic: test timed out") {
			lines = lines[:i+1]
			break
		}
	}
	return lines[max(0, len(lines)-n):]
}

type pkg struct {
	start  time.Time
	tests  map[string]*test // top-level tests still running
	output []string         // output that belongs to no test
}

type result struct {
	pkg, name, status string
	secs              float64
}

type formatter struct {
	out     io.Writer
	pkgs    map[string]*pkg // packages that have not ended
	tests   []result        // top-level tests that ended or were killed
	totals  []result        // packages that ended
	failed  []result        // failed or killed tests and failed packages, for the summary
	last    time.Time       // latest event time: the "now" of a stream that ends early
	npass   int
	nfail   int
	nskip   int
	anyFail bool
}

func (f *formatter) printf(format string, a ...any) { fmt.Fprintf(f.out, format, a...) }

// line prints one line of go test's output; f.out is unbuffered, so each is seen at once.
func (f *formatter) line(s string) { f.printf("%s\n", strings.TrimSuffix(s, "\n")) }

func short(p string) string { return strings.TrimPrefix(p, modulePrefix) }

func (f *formatter) event(e event) {
	if e.Time.After(f.last) {
		f.last = e.Time
	}
	switch e.Action {
	case "build-output":
		f.line(e.Output) // compiler errors: the package's "fail" event follows
		return
	case "build-fail":
		return
	}
	p := f.pkgs[e.Package]
	if p == nil {
		p = &pkg{start: e.Time, tests: map[string]*test{}}
		f.pkgs[e.Package] = p
	}
	if e.Test == "" {
		switch e.Action {
		case "start":
			p.start = e.Time
		case "output":
			p.output = append(p.output, e.Output)
		case "pass", "fail", "skip":
			f.endPackage(e, p)
		}
		return
	}
	name, _, isSub := strings.Cut(e.Test, "/")
	t := p.tests[name]
	if t == nil {
		t = &test{start: e.Time}
		p.tests[name] = t
	}
	switch {
	case e.Action == "output":
		t.add(e.Output)
	case isSub: // a subtest's end is in its output ("--- FAIL: TestX/sub"), no line of its own
	case e.Action == "pass" || e.Action == "fail" || e.Action == "skip":
		delete(p.tests, name)
		f.endTest(e, name, t)
	}
}

func (f *formatter) endTest(e event, name string, t *test) {
	status := strings.ToUpper(e.Action)
	r := result{short(e.Package), name, status, e.Elapsed}
	switch e.Action {
	case "pass":
		f.npass++
	case "fail":
		f.nfail++
		f.anyFail = true
		f.failed = append(f.failed, r)
		if t.dropped > 0 {
			f.printf("... (%d earlier lines dropped)\n", t.dropped)
		}
		for _, l := range t.output {
			f.line(l)
		}
	case "skip":
		f.nskip++
	}
	f.printf("--- %s  %.1fs  %s  %s\n", status, e.Elapsed, r.pkg, name)
	if e.Action == "skip" {
		if reason := skipReason(t.output); reason != "" {
			f.printf("    %s\n", reason)
		}
	}
	f.tests = append(f.tests, r)
}

// skipReason is the t.Skip message: the last line that names a source position.
func skipReason(output []string) string {
	for i := len(output) - 1; i >= 0; i-- {
		if strings.Contains(output[i], ".go:") {
			return strings.TrimSpace(output[i])
		}
	}
	return ""
}

// reportRunning prints the tests of p that never ended: its binary was killed or crashed
// (why "killed"), or the input ended (why "eof"). They count as failed.
func (f *formatter) reportRunning(pkgPath string, p *pkg, why string, now time.Time) {
	names := make([]string, 0, len(p.tests))
	for name := range p.tests {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		t := p.tests[name]
		secs := now.Sub(t.start).Seconds()
		f.printf("--- RUNNING (%s) %s %s after %.0f s\n", why, short(pkgPath), name, secs)
		for _, l := range t.tail(killedTail) {
			f.line("    " + l)
		}
		r := result{short(pkgPath), name, "RUNNING (" + why + ")", secs}
		f.tests = append(f.tests, r)
		f.failed = append(f.failed, r)
		f.nfail++
		f.anyFail = true
	}
	p.tests = map[string]*test{}
}

func (f *formatter) endPackage(e event, p *pkg) {
	delete(f.pkgs, e.Package)
	killed := len(p.tests) > 0
	f.reportRunning(e.Package, p, "killed", e.Time)
	if e.Action == "skip" { // [no test files]
		return
	}
	status := "ok"
	if e.Action == "fail" || killed {
		status = "FAIL"
	}
	f.pkgEnded(e.Package, p, status, e.Elapsed, "")
}

func (f *formatter) pkgEnded(pkgPath string, p *pkg, status string, secs float64, note string) {
	if status == "FAIL" {
		for _, l := range p.output { // build errors, panics outside tests, go test's FAIL line
			f.line(l)
		}
	}
	r := result{short(pkgPath), "", status, secs}
	f.printf("%-4s %s  %.1fs%s\n", status, r.pkg, secs, note)
	f.totals = append(f.totals, r)
	if status == "FAIL" {
		f.anyFail = true
		f.failed = append(f.failed, r)
	}
}

// finish reports what the input left open, then the summary; it returns the exit status.
func (f *formatter) finish(slowest int) int {
	paths := make([]string, 0, len(f.pkgs))
	for path := range f.pkgs {
		paths = append(paths, path)
	}
	sort.Strings(paths)
	for _, path := range paths {
		p := f.pkgs[path]
		f.reportRunning(path, p, "eof", f.last)
		f.pkgEnded(path, p, "FAIL", f.last.Sub(p.start).Seconds(), " (did not end)")
	}

	bySecs := func(rs []result) {
		sort.SliceStable(rs, func(i, j int) bool { return rs[i].secs > rs[j].secs })
	}
	bySecs(f.tests)
	if n := min(slowest, len(f.tests)); n > 0 {
		f.printf("\nslowest tests:\n")
		for _, r := range f.tests[:n] {
			note := ""
			if why, ok := strings.CutPrefix(r.status, "RUNNING "); ok {
				note = " " + why
			}
			f.printf("%8.1fs  %s  %s%s\n", r.secs, r.pkg, r.name, note)
		}
	}
	bySecs(f.totals)
	if len(f.totals) > 0 {
		f.printf("\nseconds per package:\n")
		for _, r := range f.totals {
			f.printf("%8.1fs  %-4s %s\n", r.secs, r.status, r.pkg)
		}
	}
	if len(f.failed) > 0 {
		f.printf("\nfailed:\n")
		for _, r := range f.failed {
			f.line(strings.TrimRight(fmt.Sprintf("  %s  %s  %s", r.status, r.pkg, r.name), " "))
		}
	}
	f.printf("\n%d passed, %d failed, %d skipped\n", f.npass, f.nfail, f.nskip)
	if f.anyFail {
		return 1
	}
	return 0
}

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("testfmt", flag.ContinueOnError)
	fs.SetOutput(stderr)
	jsonFile := fs.String("json", "", "write every input line to `FILE` as it is read")
	keep := fs.Bool("keep-on-failure", false, "with -json, remove FILE at the end unless a test or package failed")
	slowest := fs.Int("slowest", 20, "list the `N` slowest tests at the end")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *keep && *jsonFile == "" {
		fmt.Fprintln(stderr, "usage: go test -json ... | testfmt [-json FILE [-keep-on-failure]] [-slowest N] [STREAM...]")
		return 2
	}
	inputs := []io.Reader{stdin}
	if fs.NArg() > 0 {
		inputs = nil
		for _, name := range fs.Args() {
			r, err := os.Open(name)
			if err != nil {
				fmt.Fprintln(stderr, "testfmt:", err)
				return 2
			}
			defer r.Close()
			inputs = append(inputs, r)
		}
	}
	var raw *os.File
	if *jsonFile != "" {
		var err error
		if raw, err = os.Create(*jsonFile); err != nil {
			fmt.Fprintln(stderr, "testfmt:", err)
			return 2
		}
	}

	f := &formatter{out: stdout, pkgs: map[string]*pkg{}}
	for l := range merged(inputs) {
		if l.err != nil {
			fmt.Fprintln(stderr, "testfmt: reading the input:", l.err)
			f.anyFail = true
			continue
		}
		line := l.text
		if raw != nil {
			// Unbuffered, so the file is whole up to the last line even if we are killed.
			raw.Write(append(bytes.TrimSuffix(line, []byte("\n")), '\n'))
		}
		var e event
		if json.Unmarshal(line, &e) != nil || e.Action == "" || e.Package+e.ImportPath == "" {
			f.line(string(line)) // e.g. go test's own errors before the JSON starts
		} else {
			f.event(e)
		}
	}
	code := f.finish(*slowest)

	if raw != nil {
		raw.Close()
		if *keep && code == 0 {
			os.Remove(*jsonFile)
		} else {
			fmt.Fprintf(stderr, "testfmt: go test -json output kept in %s\n", *jsonFile)
		}
	}
	return code
}

// line is one line of an input, or the error that ended it.
type line struct {
	text []byte
	err  error
}

// merged reads the inputs side by side and yields their lines whole, in the order they
// arrive, until every input has ended. The events of one test binary come from one input,
// so their order is kept.
func merged(inputs []io.Reader) <-chan line {
	out := make(chan line)
	var wg sync.WaitGroup
	for _, r := range inputs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			in := bufio.NewReader(r)
			for {
				text, err := in.ReadBytes('\n') // no line length limit, unlike bufio.Scanner
				if len(text) > 0 {
					out <- line{text: text}
				}
				if err != nil {
					if err != io.EOF {
						out <- line{err: err}
					}
					return
				}
			}
		}()
	}
	go func() { wg.Wait(); close(out) }()
	return out
}

func main() {
	// Ctrl-C reaches the whole pipeline: let go test die and close our stdin, so the tests
	// that were running and the summary are still printed. A second Ctrl-C quits at once.
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt)
	go func() {
		<-sig
		<-sig
		os.Exit(130)
	}()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
