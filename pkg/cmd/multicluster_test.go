package cmd_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"

	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

// meshCase is one install of the multi-cluster walkthrough (docs/multicluster.md): our
// command line, and upstream's for the same inputs (-f files relative to the repo root).
type meshCase struct {
	name         string
	ours, theirs []string
}

const meshDir = "testdata/multicluster/mesh/"

// The placeholder for cluster-1's east-west gateway address in the offline comparison.
const remotePilotPlaceholder = "192.0.2.1"

var meshCases = []meshCase{
	{"cluster-1", []string{"-f", meshDir + "cluster-1.yaml"}, nil},
	{"cluster-2", []string{"-f", meshDir + "cluster-2.yaml"}, nil},
	{"cluster-3", []string{"-f", meshDir + "cluster-3.yaml", "--set", "values.global.remotePilotAddress=" + remotePilotPlaceholder,
		"--set", "external.remote.controlPlaneClusters=cluster-1"},
		[]string{"-f", meshDir + "cluster-3.yaml", "--set", "values.global.remotePilotAddress=" + remotePilotPlaceholder}},
	{"eastwest-net1", []string{"--set", "profile=eastwest", "--set", "values.global.network=net1"},
		[]string{"-f", "testdata/multicluster/upstream/gen-eastwest-net1.yaml"}},
	{"eastwest-net1-canary", []string{"--set", "profile=eastwest", "--set", "values.global.network=net1", "--revision", "canary"},
		[]string{"-f", "testdata/multicluster/upstream/gen-eastwest-net1-canary.yaml"}},
}

func (c meshCase) upstreamArgs() []string {
	if c.theirs != nil {
		return c.theirs
	}
	return c.ours
}

func (c meshCase) golden() string { return "testdata/multicluster/upstream/" + c.name + ".txt" }

// installLabels are labels an install sets on its own (the owner's name, the version) and
// manifest generate cannot know: the comparison leaves them out.
var installLabels = []string{"app.kubernetes.io/version", "helm.sh/chart", "install.operator.istio.io/owning-resource"}

// identities is each object of a manifest as "Kind namespace/name label=value,...", sorted,
// without installLabels.
func identities(t *testing.T, manifest string) []string {
	t.Helper()
	dec := utilyaml.NewYAMLOrJSONDecoder(strings.NewReader(manifest), 4096)
	var out []string
	for {
		var m map[string]any
		if err := dec.Decode(&m); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatal(err)
		}
		if len(m) == 0 {
			continue
		}
		o := unstructured.Unstructured{Object: m}
		out = append(out, identity(o.GetKind(), o.GetNamespace(), o.GetName(), o.GetLabels()))
	}
	sort.Strings(out)
	return out
}

func identity(kind, ns, name string, labels map[string]string) string {
	var ls []string
	for k, v := range labels {
		if !slices.Contains(installLabels, k) {
			ls = append(ls, k+"="+v)
		}
	}
	sort.Strings(ls)
	return kind + " " + ns + "/" + name + " " + strings.Join(ls, ",")
}

// TestMulticlusterMatchesUpstream: what our commands of the walkthrough render, the east-west
// gateway by the eastwest profile, is upstream istioctl's manifest generate of the same
// inputs (for the gateway: the IstioOperator gen-eastwest-gateway.sh prints), object for
// object, names and labels. ISTIOCTL_RECORD_UPSTREAM=1 records upstream's side with
// bin/upstream/istioctl.
func TestMulticlusterMatchesUpstream(t *testing.T) {
	toRepoRoot(t)
	record := os.Getenv("ISTIOCTL_RECORD_UPSTREAM") == "1"
	for _, c := range meshCases {
		t.Run(c.name, func(t *testing.T) {
			if record {
				cmd := exec.Command("bin/upstream/istioctl", append([]string{"manifest", "generate"}, c.upstreamArgs()...)...)
				var stderr bytes.Buffer
				cmd.Stderr = &stderr
				out, err := cmd.Output()
				if err != nil {
					t.Fatalf("upstream manifest generate %v: %v\n%s", c.upstreamArgs(), err, stderr.String())
				}
				body := "# upstream istioctl manifest generate " + strings.Join(c.upstreamArgs(), " ") + "\n" + strings.Join(identities(t, string(out)), "\n") + "\n"
				if err := os.WriteFile(c.golden(), []byte(body), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			out, _, err := harness.Run(t, append([]string{"manifest", "generate"}, c.ours...)...)
			if err != nil {
				t.Fatal(err)
			}
			want := upstreamIdentities(t, c)
			if got := identities(t, out); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("ours (manifest generate %s) and upstream's differ:\n%s", strings.Join(c.ours, " "), lineDiff(want, got))
			}
		})
	}
}

// upstreamIdentities reads the recorded identities of a case.
func upstreamIdentities(t *testing.T, c meshCase) []string {
	t.Helper()
	b, err := os.ReadFile(filepath.Clean(c.golden()))
	if err != nil {
		t.Fatalf("%v (ISTIOCTL_RECORD_UPSTREAM=1 records it)", err)
	}
	var out []string
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		if !strings.HasPrefix(l, "#") {
			out = append(out, l)
		}
	}
	return out
}

// lineDiff names the lines only one side has.
func lineDiff(want, got []string) string {
	var b strings.Builder
	for _, w := range want {
		if !slices.Contains(got, w) {
			b.WriteString("- " + w + "\n")
		}
	}
	for _, g := range got {
		if !slices.Contains(want, g) {
			b.WriteString("+ " + g + "\n")
		}
	}
	return b.String()
}
