package cmd_test

import (
	"os"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// TestBadInputNoWriteE2E runs `install -y` with every malformed spec file and --set flag of
// the corpus (testdata/spec/bad, badSets) against a cluster holding a good install. Each
// must fail with the corpus's error, of manifest generate's kind (a data error, exit 1; a
// malformed --set flag a usage error, 64), send no write request (istioctl talks through a
// recording proxy), and leave every object an install may write at its resourceVersion.
func TestBadInputNoWriteE2E(t *testing.T) {
	c := cluster.Get(t)
	toRepoRoot(t)
	kubeconfig, log := harness.RecordingProxy(t, c)
	harness.Istioctl{T: t, Kubeconfig: c.Kubeconfig}.PurgeAtEnd()
	if out, stderr, err := harness.Run(t, "--kubeconfig", c.Kubeconfig, "install", "-y"); err != nil {
		t.Fatalf("the good install: %v\n%s\n%s", err, out, stderr)
	}

	type input struct {
		name  string
		args  []string // the spec flags
		want  string   // the error manifest generate gives, pinned by a golden file
		usage bool     // manifest generate's is a usage error
	}
	var inputs []input
	for _, f := range badSpecFiles(t) {
		want, err := os.ReadFile(strings.TrimSuffix(f, ".yaml") + ".err")
		if err != nil {
			t.Fatal(err)
		}
		inputs = append(inputs, input{f, []string{"-f", f}, strings.TrimSuffix(string(want), "\n"), false})
	}
	for _, s := range badSets {
		_, _, err := harness.Run(t, "manifest", "generate", "--set", s)
		if err == nil {
			t.Fatalf("--set %s: manifest generate accepts it", s)
		}
		inputs = append(inputs, input{"--set " + s, []string{"--set", s}, err.Error(), isUsage(err)})
	}

	// One snapshot before the inputs and one after them all (not two per input, 200 in
	// all): what any input wrote still differs at the end, since no input can write it
	// back, and the proxy's per-input write check names the input that sent it.
	before := harness.ObjectVersions(t, c)
	requests := 0
	for _, in := range inputs {
		log.Take()
		out, stderr, err := harness.Run(t, append([]string{"--kubeconfig", kubeconfig, "install", "-y"}, in.args...)...)
		reqs := log.Take()
		requests += len(reqs)
		if w := harness.Writes(reqs); len(w) > 0 {
			t.Errorf("%s: istioctl sent %d write request(s): %v", in.name, len(w), w)
		}
		switch {
		case err == nil:
			t.Errorf("%s: install succeeded\n%s", in.name, out)
		case isUsage(err) != in.usage || exitCode(err) == 0:
			t.Errorf("%s: usage error %v (exit %d), want %v as manifest generate's: %v", in.name, isUsage(err), exitCode(err), in.usage, err)
		case err.Error() != in.want:
			t.Errorf("%s: install says\n  %s\nmanifest generate says\n  %s", in.name, err, in.want)
		}
		if strings.Contains(stderr, "panic") || strings.Contains(out, "panic") {
			t.Errorf("%s: panic in the output:\n%s\n%s", in.name, out, stderr)
		}
	}
	if diffs := harness.VersionsDiff(before, harness.ObjectVersions(t, c)); len(diffs) > 0 {
		t.Errorf("the cluster changed during the bad inputs:\n  %s", strings.Join(diffs, "\n  "))
	}
	// The proxy does see istioctl's traffic: a good command's requests show up.
	if _, _, err := harness.Run(t, "--kubeconfig", kubeconfig, "version"); err != nil {
		t.Fatal(err)
	}
	if len(log.Take()) == 0 {
		t.Fatal("the recording proxy saw no request from istioctl version")
	}
	if len(inputs) < 100 {
		t.Errorf("only %d bad inputs", len(inputs))
	}
	if !t.Failed() {
		t.Logf("%d bad inputs: each failed with its corpus error; %d requests reached the apiserver, none a write; no object changed", len(inputs), requests)
	}
}
