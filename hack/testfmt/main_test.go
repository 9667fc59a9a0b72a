package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// The inputs are shaped like what go1.26's `go test -json` prints for such runs.

const allPass = `{"Time":"2026-01-02T10:00:00Z","Action":"start","Package":"github.com/istioctl-installer/istioctl/operator/skew"}
{"Time":"2026-01-02T10:00:01Z","Action":"run","Package":"github.com/istioctl-installer/istioctl/operator/skew","Test":"TestCompat"}
{"Time":"2026-01-02T10:00:01Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/operator/skew","Test":"TestCompat","Output":"=== RUN   TestCompat\n"}
{"Time":"2026-01-02T10:00:13Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/operator/skew","Test":"TestCompat","Output":"--- PASS: TestCompat (12.30s)\n"}
{"Time":"2026-01-02T10:00:13Z","Action":"pass","Package":"github.com/istioctl-installer/istioctl/operator/skew","Test":"TestCompat","Elapsed":12.3}
{"Time":"2026-01-02T10:00:13Z","Action":"run","Package":"github.com/istioctl-installer/istioctl/operator/skew","Test":"TestVersions"}
{"Time":"2026-01-02T10:00:13Z","Action":"run","Package":"github.com/istioctl-installer/istioctl/operator/skew","Test":"TestVersions/1.24"}
{"Time":"2026-01-02T10:00:14Z","Action":"pass","Package":"github.com/istioctl-installer/istioctl/operator/skew","Test":"TestVersions/1.24","Elapsed":0.5}
{"Time":"2026-01-02T10:00:14Z","Action":"pass","Package":"github.com/istioctl-installer/istioctl/operator/skew","Test":"TestVersions","Elapsed":0.6}
{"Time":"2026-01-02T10:00:14Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/operator/skew","Output":"PASS\n"}
{"Time":"2026-01-02T10:00:14Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/operator/skew","Output":"ok  \tgithub.com/istioctl-installer/istioctl/operator/skew\t13.100s\n"}
{"Time":"2026-01-02T10:00:14Z","Action":"pass","Package":"github.com/istioctl-installer/istioctl/operator/skew","Elapsed":13.1}
{"Time":"2026-01-02T10:00:14Z","Action":"skip","Package":"github.com/istioctl-installer/istioctl/hack/fakelb","Elapsed":0}
`

const failSub = `{"Time":"2026-01-02T10:00:00Z","Action":"start","Package":"github.com/istioctl-installer/istioctl/pkg/cmd"}
{"Time":"2026-01-02T10:00:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Output":"cluster up\n"}
{"Time":"2026-01-02T10:00:00Z","Action":"run","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestInstall"}
{"Time":"2026-01-02T10:00:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestInstall","Output":"=== RUN   TestInstall\n"}
{"Time":"2026-01-02T10:00:00Z","Action":"run","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestInstall/demo"}
{"Time":"2026-01-02T10:00:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestInstall/demo","Output":"=== RUN   TestInstall/demo\n"}
{"Time":"2026-01-02T10:01:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestInstall/demo","Output":"    install_test.go:42: istiod not ready: "}
{"Time":"2026-01-02T10:01:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestInstall/demo","Output":"context deadline exceeded\n"}
{"Time":"2026-01-02T10:01:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestInstall/demo","Output":"    --- FAIL: TestInstall/demo (60.00s)\n"}
{"Time":"2026-01-02T10:01:00Z","Action":"fail","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestInstall/demo","Elapsed":60}
{"Time":"2026-01-02T10:01:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestInstall","Output":"--- FAIL: TestInstall (60.10s)\n"}
{"Time":"2026-01-02T10:01:00Z","Action":"fail","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestInstall","Elapsed":60.1}
{"Time":"2026-01-02T10:01:00Z","Action":"run","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestVersion"}
{"Time":"2026-01-02T10:01:01Z","Action":"pass","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestVersion","Elapsed":1}
{"Time":"2026-01-02T10:01:01Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Output":"FAIL\n"}
{"Time":"2026-01-02T10:01:01Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Output":"FAIL\tgithub.com/istioctl-installer/istioctl/pkg/cmd\t61.200s\n"}
{"Time":"2026-01-02T10:01:01Z","Action":"fail","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Elapsed":61.2}
`

const skip = `{"Time":"2026-01-02T10:00:00Z","Action":"start","Package":"github.com/istioctl-installer/istioctl/pkg/kube"}
{"Time":"2026-01-02T10:00:00Z","Action":"run","Package":"github.com/istioctl-installer/istioctl/pkg/kube","Test":"TestCluster"}
{"Time":"2026-01-02T10:00:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/kube","Test":"TestCluster","Output":"=== RUN   TestCluster\n"}
{"Time":"2026-01-02T10:00:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/kube","Test":"TestCluster","Output":"    kube_test.go:17: no cluster: KUBECONFIG unset\n"}
{"Time":"2026-01-02T10:00:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/kube","Test":"TestCluster","Output":"--- SKIP: TestCluster (0.00s)\n"}
{"Time":"2026-01-02T10:00:00Z","Action":"skip","Package":"github.com/istioctl-installer/istioctl/pkg/kube","Test":"TestCluster","Elapsed":0}
{"Time":"2026-01-02T10:00:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/kube","Output":"ok  \tgithub.com/istioctl-installer/istioctl/pkg/kube\t0.020s\n"}
{"Time":"2026-01-02T10:00:00Z","Action":"pass","Package":"github.com/istioctl-installer/istioctl/pkg/kube","Elapsed":0.02}
`

// The binary panics on -timeout while TestUpgrade runs: the panic is output of that test,
// which never gets an end event; the package fails.
const timeout = `{"Time":"2026-01-02T10:00:00Z","Action":"start","Package":"github.com/istioctl-installer/istioctl/pkg/cmd"}
{"Time":"2026-01-02T10:00:00Z","Action":"run","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestUpgrade"}
{"Time":"2026-01-02T10:00:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestUpgrade","Output":"=== RUN   TestUpgrade\n"}
{"Time":"2026-01-02T10:00:01Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestUpgrade","Output":"    upgrade_test.go:30: waiting for istiod-canary\n"}
{"Time":"2026-01-02T10:10:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestUpgrade","Output":"panic: test timed out after 10m0s\n"}
{"Time":"2026-01-02T10:10:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestUpgrade","Output":"\trunning tests:\n"}
{"Time":"2026-01-02T10:10:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestUpgrade","Output":"\t\tTestUpgrade (10m0s)\n"}
{"Time":"2026-01-02T10:10:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestUpgrade","Output":"goroutine 25 [running]:\n"}
{"Time":"2026-01-02T10:10:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Output":"FAIL\tgithub.com/istioctl-installer/istioctl/pkg/cmd\t600.012s\n"}
{"Time":"2026-01-02T10:10:00Z","Action":"fail","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Elapsed":600.012}
`

// The input stops in the middle of TestUpgrade (go test killed, pipe closed).
const eof = `{"Time":"2026-01-02T10:00:00Z","Action":"start","Package":"github.com/istioctl-installer/istioctl/pkg/cmd"}
{"Time":"2026-01-02T10:00:00Z","Action":"run","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestVersion"}
{"Time":"2026-01-02T10:00:02Z","Action":"pass","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestVersion","Elapsed":2}
{"Time":"2026-01-02T10:00:05Z","Action":"run","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestUpgrade"}
{"Time":"2026-01-02T10:00:05Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestUpgrade","Output":"=== RUN   TestUpgrade\n"}
{"Time":"2026-01-02T10:01:35Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Test":"TestUpgrade","Output":"    upgrade_test.go:30: waiting for istiod-canary\n"}`

// go1.26 reports compile errors as build-output events; the go command may also print
// plain text (here a vet-like line) before the JSON.
const buildFail = `# github.com/istioctl-installer/istioctl/pkg/cmd
go: warning: something printed as text
{"ImportPath":"github.com/istioctl-installer/istioctl/pkg/cmd [github.com/istioctl-installer/istioctl/pkg/cmd.test]","Action":"build-output","Output":"# github.com/istioctl-installer/istioctl/pkg/cmd [github.com/istioctl-installer/istioctl/pkg/cmd.test]\n"}
{"ImportPath":"github.com/istioctl-installer/istioctl/pkg/cmd [github.com/istioctl-installer/istioctl/pkg/cmd.test]","Action":"build-output","Output":"pkg/cmd/install_test.go:5:28: undefined: installx\n"}
{"ImportPath":"github.com/istioctl-installer/istioctl/pkg/cmd [github.com/istioctl-installer/istioctl/pkg/cmd.test]","Action":"build-fail"}
{"Time":"2026-01-02T10:00:00Z","Action":"start","Package":"github.com/istioctl-installer/istioctl/pkg/cmd"}
{"Time":"2026-01-02T10:00:00Z","Action":"output","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Output":"FAIL\tgithub.com/istioctl-installer/istioctl/pkg/cmd [build failed]\n"}
{"Time":"2026-01-02T10:00:00Z","Action":"fail","Package":"github.com/istioctl-installer/istioctl/pkg/cmd","Elapsed":0,"FailedBuild":"github.com/istioctl-installer/istioctl/pkg/cmd [github.com/istioctl-installer/istioctl/pkg/cmd.test]"}
`

func TestRun(t *testing.T) {
	for _, tc := range []struct {
		name  string
		input string
		args  []string
		code  int
		want  []string // lines that must appear, in this order
		never []string // substrings that must not appear
	}{{
		name:  "all pass",
		input: allPass,
		code:  0,
		want: []string{
			"--- PASS  12.3s  operator/skew  TestCompat",
			"--- PASS  0.6s  operator/skew  TestVersions",
			"ok   operator/skew  13.1s",
			"slowest tests:",
			"    12.3s  operator/skew  TestCompat",
			"     0.6s  operator/skew  TestVersions",
			"seconds per package:",
			"    13.1s  ok   operator/skew",
			"2 passed, 0 failed, 0 skipped",
		},
		never: []string{"TestVersions/1.24", "=== RUN", "hack/fakelb", "failed:"},
	}, {
		name:  "failing test with subtests",
		input: failSub,
		code:  1,
		want: []string{
			"=== RUN   TestInstall",
			"=== RUN   TestInstall/demo",
			"    install_test.go:42: istiod not ready: context deadline exceeded",
			"    --- FAIL: TestInstall/demo (60.00s)",
			"--- FAIL: TestInstall (60.10s)",
			"--- FAIL  60.1s  pkg/cmd  TestInstall",
			"--- PASS  1.0s  pkg/cmd  TestVersion",
			"cluster up",
			"FAIL\tgithub.com/istioctl-installer/istioctl/pkg/cmd\t61.200s",
			"FAIL pkg/cmd  61.2s",
			"failed:",
			"  FAIL  pkg/cmd  TestInstall",
			"  FAIL  pkg/cmd",
			"1 passed, 1 failed, 0 skipped",
		},
		never: []string{"--- FAIL  60.0s"},
	}, {
		name:  "skip with reason",
		input: skip,
		code:  0,
		want: []string{
			"--- SKIP  0.0s  pkg/kube  TestCluster",
			"    kube_test.go:17: no cluster: KUBECONFIG unset",
			"ok   pkg/kube  0.0s",
			"0 passed, 0 failed, 1 skipped",
		},
	}, {
		name:  "package killed by timeout",
		input: timeout,
		code:  1,
		want: []string{
			"--- RUNNING (killed) pkg/cmd TestUpgrade after 600 s",
			"    === RUN   TestUpgrade",
			"        upgrade_test.go:30: waiting for istiod-canary",
			"    panic: test timed out after 10m0s",
			"FAIL\tgithub.com/istioctl-installer/istioctl/pkg/cmd\t600.012s",
			"FAIL pkg/cmd  600.0s",
			"   600.0s  pkg/cmd  TestUpgrade (killed)",
			"  RUNNING (killed)  pkg/cmd  TestUpgrade",
			"0 passed, 1 failed, 0 skipped",
		},
		never: []string{"goroutine 25"},
	}, {
		name:  "EOF mid-test",
		input: eof,
		code:  1,
		want: []string{
			"--- PASS  2.0s  pkg/cmd  TestVersion",
			"--- RUNNING (eof) pkg/cmd TestUpgrade after 90 s",
			"        upgrade_test.go:30: waiting for istiod-canary",
			"FAIL pkg/cmd  95.0s (did not end)",
			"1 passed, 1 failed, 0 skipped",
		},
	}, {
		name:  "build failure",
		input: buildFail,
		code:  1,
		want: []string{
			"# github.com/istioctl-installer/istioctl/pkg/cmd",
			"go: warning: something printed as text",
			"pkg/cmd/install_test.go:5:28: undefined: installx",
			"FAIL\tgithub.com/istioctl-installer/istioctl/pkg/cmd [build failed]",
			"FAIL pkg/cmd  0.0s",
			"0 passed, 0 failed, 0 skipped",
		},
		never: []string{"slowest tests:"},
	}, {
		name:  "slowest 1",
		input: allPass,
		args:  []string{"-slowest", "1"},
		code:  0,
		want:  []string{"slowest tests:", "    12.3s  operator/skew  TestCompat", "seconds per package:", "2 passed, 0 failed, 0 skipped"},
		never: []string{"     0.6s  operator/skew  TestVersions"},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tc.args, strings.NewReader(tc.input), &stdout, &stderr)
			out := stdout.String()
			if code != tc.code {
				t.Errorf("exit code %d, want %d", code, tc.code)
			}
			checkLines(t, out, tc.want)
			for _, s := range tc.never {
				if strings.Contains(out, s) {
					t.Errorf("output has %q", s)
				}
			}
			// The closing line comes last: want ends with it.
			lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
			if last := lines[len(lines)-1]; last != tc.want[len(tc.want)-1] {
				t.Errorf("last line %q", last)
			}
			if stderr.Len() > 0 {
				t.Errorf("stderr: %s", stderr.String())
			}
			if t.Failed() {
				t.Logf("output:\n%s", out)
			}
		})
	}
}

// checkLines checks that want are whole lines of out, in this order.
func checkLines(t *testing.T, out string, want []string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	i := 0
	for _, w := range want {
		j := slices.Index(lines[i:], w)
		if j < 0 {
			t.Errorf("no line %q (after line %d)", w, i)
			continue
		}
		i += j + 1
	}
}

func TestKeepOnFailure(t *testing.T) {
	for _, tc := range []struct {
		input string
		kept  bool
	}{{allPass, false}, {failSub, true}, {eof, true}} {
		file := filepath.Join(t.TempDir(), "test.json")
		var stdout, stderr bytes.Buffer
		code := run([]string{"-json", file, "-keep-on-failure"}, strings.NewReader(tc.input), &stdout, &stderr)
		data, err := os.ReadFile(file)
		switch {
		case !tc.kept && err == nil:
			t.Errorf("exit %d: %s kept", code, file)
		case !tc.kept && stderr.Len() > 0:
			t.Errorf("exit %d: stderr %q", code, stderr.String())
		case tc.kept && err != nil:
			t.Errorf("exit %d: %v", code, err)
		case tc.kept && strings.TrimSuffix(string(data), "\n") != strings.TrimSuffix(tc.input, "\n"):
			t.Errorf("exit %d: %s is not the input:\n%s", code, file, data)
		case tc.kept && !strings.Contains(stderr.String(), file):
			t.Errorf("exit %d: stderr %q does not name %s", code, stderr.String(), file)
		}
	}

	// Without -keep-on-failure the file stays, passed or not.
	file := filepath.Join(t.TempDir(), "test.json")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-json", file}, strings.NewReader(allPass), &stdout, &stderr); code != 0 {
		t.Errorf("exit %d", code)
	}
	if _, err := os.Stat(file); err != nil {
		t.Error(err)
	}
}

func TestUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-keep-on-failure"}, strings.NewReader(""), &stdout, &stderr); code != 2 {
		t.Errorf("-keep-on-failure without -json: exit %d, want 2", code)
	}
}

// Two streams named as arguments (the test binaries of two lanes) are read side by side:
// each package's result is what its own stream says, and the summary counts both.
func TestStreamsSideBySide(t *testing.T) {
	dir := t.TempDir()
	a, b := filepath.Join(dir, "a.json"), filepath.Join(dir, "b.json")
	if err := os.WriteFile(a, []byte(allPass), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(b, []byte(failSub), 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if code := run([]string{a, b}, strings.NewReader(""), &stdout, &stderr); code != 1 {
		t.Errorf("exit %d, want 1 (a test of the second stream failed)\n%s%s", code, stdout.String(), stderr.String())
	}
	out := stdout.String()
	for _, want := range []string{"--- PASS  12.3s  operator/skew  TestCompat", "--- FAIL  60.1s  pkg/cmd  TestInstall", "ok   operator/skew  13.1s"} {
		if !strings.Contains(out, want) {
			t.Errorf("no line %q in:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "3 passed, 1 failed, 0 skipped") {
		t.Errorf("the summary does not count both streams:\n%s", out)
	}
	if code := run([]string{filepath.Join(dir, "missing")}, strings.NewReader(""), &stdout, &stderr); code != 2 {
		t.Errorf("a stream that cannot be opened: exit %d, want 2", code)
	}
}
