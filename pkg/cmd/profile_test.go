package cmd_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/cmd"
	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// toRepoRoot runs the test from the repository root, so file names in messages and golden
// paths are relative to it.
func toRepoRoot(t *testing.T) {
	t.Helper()
	t.Chdir("../..")
	t.Setenv("HOME", t.TempDir())
}

func TestProfileList(t *testing.T) {
	toRepoRoot(t)
	out, _, err := harness.Run(t, "profile", "list")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/profile/list.txt", []byte(out))
	out, _, err = harness.Run(t, "profile", "list", "-o", "json")
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "testdata/profile/list.json", []byte(out))
}

func TestProfileDumpEveryProfile(t *testing.T) {
	toRepoRoot(t)
	profs, err := spec.NewProfiles("")
	if err != nil {
		t.Fatal(err)
	}
	names, err := profs.Names()
	if err != nil {
		t.Fatal(err)
	}
	// Upstream's 10, and eastwest: its gen-eastwest-gateway.sh as a profile (docs/multicluster.md).
	if len(names) != 11 {
		t.Errorf("%d profiles, want the 10 upstream has and eastwest: %v", len(names), names)
	}
	for _, name := range names {
		t.Run(name, func(t *testing.T) {
			out, stderr, err := harness.Run(t, "profile", "dump", name)
			if err != nil {
				t.Fatal(err)
			}
			if stderr != "" {
				t.Errorf("unexpected warnings: %s", stderr)
			}
			golden.Check(t, filepath.Join("testdata/profile/dump", name+".yaml"), []byte(out))
		})
	}
}

func TestProfileDumpFormats(t *testing.T) {
	toRepoRoot(t)
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"config-path.yaml", []string{"profile", "dump", "demo", "--config-path", "components.egressGateways[name:istio-egressgateway]"}},
		{"flags.txt", []string{"profile", "dump", "ambient", "-o", "flags"}},
		{"json.json", []string{"profile", "dump", "minimal", "-o", "json", "-p", "values.global"}},
		{"with-set.yaml", []string{"profile", "dump", "--set", "components.ingressGateways[name:istio-ingressgateway].k8s.hpaSpec.maxReplicas=7", "-p", "components.ingressGateways"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, _, err := harness.Run(t, tc.args...)
			if err != nil {
				t.Fatal(err)
			}
			golden.Check(t, filepath.Join("testdata/profile/formats", tc.name), []byte(out))
		})
	}
}

func TestProfileDiff(t *testing.T) {
	toRepoRoot(t)
	out, _, err := harness.Run(t, "profile", "diff", "default", "demo")
	var exit *cmd.ExitError
	if !errors.As(err, &exit) || exit.Code != 1 {
		t.Fatalf("profile diff default demo: err = %v, want exit code 1", err)
	}
	golden.Check(t, "testdata/profile/diff-default-demo.diff", []byte(out))

	out, _, err = harness.Run(t, "profile", "diff", "default", "default")
	if err != nil {
		t.Fatalf("same profiles: %v", err)
	}
	if !strings.Contains(out, "are the same") {
		t.Errorf("same profiles: %q", out)
	}
	if _, _, err := harness.Run(t, "profile", "diff", "default"); !isUsage(err) {
		t.Errorf("one argument: want a usage error, got %v", err)
	}
}

func isUsage(err error) bool {
	var u *cmd.UsageError
	return errors.As(err, &u)
}

// Every malformed spec file fails with an error naming the file, the line or the field,
// the same from manifest generate (which renders: the golden error) and from profile dump
// (which only resolves), except for render-*.yaml: inputs only the render can find wrong.
func TestBadSpecFiles(t *testing.T) {
	toRepoRoot(t)
	files := badSpecFiles(t)
	if len(files) < 60 {
		t.Errorf("only %d bad inputs", len(files))
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, _, err := harness.Run(t, "manifest", "generate", "-f", f)
			if err == nil {
				t.Fatal("want an error")
			}
			if isUsage(err) {
				t.Errorf("a bad spec is a data error, not a usage error: %v", err)
			}
			msg := err.Error()
			if !strings.Contains(msg, f) && !strings.Contains(msg, "spec.") && !strings.Contains(msg, "k8s.overlays[") {
				t.Errorf("error names neither the file nor a field: %s", msg)
			}
			golden.Check(t, strings.TrimSuffix(f, ".yaml")+".err", []byte(msg+"\n"))
			_, _, err = harness.Run(t, "profile", "dump", "-f", f)
			render := strings.HasPrefix(filepath.Base(f), "render-")
			switch {
			case render && err != nil:
				t.Errorf("profile dump should accept a spec only the render finds wrong: %v", err)
			case !render && (err == nil || err.Error() != msg):
				t.Errorf("profile dump: %v, want the same error as manifest generate", err)
			}
		})
	}
}

// TestWarnedSpecFiles keeps the spec files upstream reads and we read as it does, with a
// warning where we would have been stricter (a missing or misspelled apiVersion, another
// kind, a duplicate key): manifest generate and profile dump accept them, and the warnings,
// each naming the file, line and field, are in testdata/spec/warn/*.warn.
func TestWarnedSpecFiles(t *testing.T) {
	toRepoRoot(t)
	files, err := filepath.Glob("testdata/spec/warn/*.yaml")
	if err != nil || len(files) < 5 {
		t.Fatalf("%d warned inputs (%v), want at least 5", len(files), err)
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			_, stderr, err := harness.Run(t, "manifest", "generate", "-f", f)
			if err != nil {
				t.Fatalf("want it accepted (upstream accepts it): %v", err)
			}
			if !strings.Contains(stderr, f+":") {
				t.Errorf("no warning names %s: %q", f, stderr)
			}
			golden.Check(t, strings.TrimSuffix(f, ".yaml")+".warn", []byte(stderr))
			if _, _, err := harness.Run(t, "profile", "dump", "-f", f); err != nil {
				t.Errorf("profile dump: %v, want it accepted", err)
			}
		})
	}
}

func badSpecFiles(t *testing.T) []string {
	t.Helper()
	files, err := filepath.Glob("testdata/spec/bad/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// badSets are malformed --set flags; testdata/spec/bad-set.txt holds their errors.
var badSets = []string{
	"components.pilot.k8s.replicaCont=2",
	"values.pilot.autoscaleEnabled=yes",
	"values.pilot.autoscaleMin=two",
	"components.ingressGateways[3].enabled=true",
	"components.ingressGateways[name:edge].enabled=true",
	"components.pilot.enabled.x=1",
	"components.pilot.k8s=x",
	"values.global.resourceScope=everything",
	"revision=Bad_Rev",
	"profile=nope",
	"hub=docker.io/UPPER",
	"noequals",
	"a..b=1",
	"components.ingressGateways[x].name=y",
	"meshConfig.defaultConfig.drainDuration=5x",
	"compatibilityVersion=9.9",
	"=x",
	"a[=1",
	"spec.profile=demo",
	"installPackagePath=/nonexistent",
	"namespace=Istio_System",
	"tag=-x",
	"components.cni.namespace=Kube_System",
	"components.pilot.k8s.replicaCount=-1",
	"components.pilot.k8s.resources.requests.cpu=lots",
	"components.pilot.k8s.imagePullPolicy=Sometimes",
	"components.pilot.k8s.nodeSelector=disk",
	"components.pilot.k8s.overlays[0].kind=Deployment",
	"components.ingressGateways[0].name=Bad_Name",
	"components.egressGateways[0].name=2fast",
	"components.ingressGateways[0].k8s.service.type=Internal",
	"components.ingressGateways[name:istio-ingressgateway].k8s.service.ports[0].port=70000",
	"values.pilot.unknownKnob=1",
	"values.global.proxy.includeIPRanges=10.0.0.0/99",
	"values.global.proxy.excludeOutboundPorts=99999",
	"meshConfig.outboundTrafficPolicy.mode=SOMETIMES",
}

// Every malformed --set fails manifest generate (so also install: the same resolve and
// render) with an error naming the flag or the field.
func TestBadSetFlags(t *testing.T) {
	toRepoRoot(t)
	if n := len(badSets) + len(badSpecFiles(t)); n < 100 {
		t.Errorf("only %d bad inputs", n)
	}
	var all strings.Builder
	for _, set := range badSets {
		_, _, err := harness.Run(t, "manifest", "generate", "--set", set)
		if err == nil {
			t.Errorf("--set %s: want an error", set)
			continue
		}
		all.WriteString("--set " + set + "\n  " + strings.ReplaceAll(err.Error(), "\n", "\n  ") + "\n")
	}
	golden.Check(t, "testdata/spec/bad-set.txt", []byte(all.String()))
}

func TestProfileDumpStdinAndWarnings(t *testing.T) {
	toRepoRoot(t)
	root := cmd.NewRootCommand(cmd.Streams{
		In:  strings.NewReader("apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec:\n  components:\n    pilot:\n      k8s:\n        replicaCount: 2\n"),
		Out: &strings.Builder{}, ErrOut: &strings.Builder{},
	})
	var out, errOut strings.Builder
	root.SetOut(&out)
	root.SetErr(&errOut)
	root.SetArgs([]string{"profile", "dump", "-f", "-", "-p", "components.pilot"})
	if err := root.Execute(); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "replicaCount: 2") {
		t.Errorf("stdin spec not applied:\n%s", out.String())
	}
	if !strings.Contains(errOut.String(), "autoscaling is on") {
		t.Errorf("want the replicaCount/autoscale warning on stderr, got %q", errOut.String())
	}
	_ = os.Stdout
}
