package fleetrun_test

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/operator/action"
	"github.com/istioctl-installer/istioctl/operator/action/fleetrun"
	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/kubeflags"
	"github.com/istioctl-installer/istioctl/operator/spec"
	"github.com/istioctl-installer/istioctl/pkg/testing/cluster"
	"github.com/istioctl-installer/istioctl/pkg/testing/harness"
)

const (
	fleetExample = "../../../docs/examples/fleet-3-clusters.yaml"
	// fleetVersion is the istioctl version the actions are given, as a command would.
	fleetVersion = "1.31.0"
	// fleetReadiness bounds each install's wait, as ISTIOCTL_READINESS_TIMEOUT does the
	// commands'.
	fleetReadiness = 2 * time.Minute
)

// fleetBed runs the fleet's actions, and the single-cluster ones, against the bed's 3
// clusters, and keeps everything they said (events, reports, warnings, results) and every
// token the clusters issued: no credential may ever be in what a run says.
type fleetBed struct {
	t    *testing.T
	bed  *cluster.Bed
	said *harness.Said
}

// newFleetBed is the bed purged of Istio and links, purged again when the test ends.
func newFleetBed(t *testing.T) *fleetBed {
	b := &fleetBed{t: t, bed: cluster.GetBed(t, 3), said: &harness.Said{}}
	b.purge()
	t.Cleanup(b.purge)
	return b
}

// with is b for a subtest.
func (b *fleetBed) with(t *testing.T) *fleetBed {
	return &fleetBed{t: t, bed: b.bed, said: b.said}
}

// record keeps what a run said.
func (b *fleetBed) record(v any) { b.said.Record(b.t, false, v) }

func (b *fleetBed) member(ctx string) *cluster.Cluster {
	for _, c := range b.bed.Clusters {
		if c.Context == ctx {
			return c
		}
	}
	b.t.Fatalf("no bed member %s", ctx)
	return nil
}

// config is what a command gives the actions: the kubeconfig ("" the bed's) and context.
func (b *fleetBed) config(kubeconfig, context string) *action.Config {
	if kubeconfig == "" {
		kubeconfig = b.bed.Kubeconfig
	}
	return &action.Config{Kube: &kubeflags.Flags{Kubeconfig: kubeconfig, Context: context, Timeout: kubeflags.DefaultTimeout},
		Version: fleetVersion, Warn: func(s string) { b.record(s) }}
}

func (b *fleetBed) fleet(kubeconfig, file string) *fleetrun.Fleet {
	return &fleetrun.Fleet{Config: b.config(kubeconfig, ""), File: file}
}

// precheck is fleet precheck of file; verify fleet verify.
func (b *fleetBed) precheck(kubeconfig, file string) *action.CheckResult {
	return b.checked(b.fleet(kubeconfig, file).Precheck)
}

func (b *fleetBed) verify(kubeconfig, file string) *action.CheckResult {
	return b.checked(b.fleet(kubeconfig, file).Verify)
}

func (b *fleetBed) checked(run func(context.Context) (*action.CheckResult, error)) *action.CheckResult {
	b.t.Helper()
	res, err := run(context.Background())
	if err != nil {
		b.t.Fatal(err)
	}
	b.record(res)
	return res
}

// verified fails the test unless fleet verify of file passes.
func (b *fleetBed) verified(what, file string) {
	b.t.Helper()
	if res := b.verify("", file); res.Failed {
		b.t.Fatalf("fleet verify %s fails:\n%s", what, fleetFailures(res.Report))
	}
}

// install is fleet install -y of file; its result, events and error.
func (b *fleetBed) install(ctx context.Context, kubeconfig, file string) (*fleetrun.Result, *event.Recorder, error) {
	rec := &event.Recorder{}
	res, err := (&fleetrun.Install{Fleet: b.fleet(kubeconfig, file), ReadinessTimeout: fleetReadiness, Events: rec}).Run(ctx, nil)
	b.record(rec.Events)
	return res, rec, err
}

// installed is an install of file that must converge.
func (b *fleetBed) installed(what, file string) (*fleetrun.Result, *event.Recorder) {
	b.t.Helper()
	res, rec, err := b.install(context.Background(), "", file)
	if err != nil {
		b.t.Fatalf("fleet install %s: %v", what, err)
	}
	return res, rec
}

// uninstalled is fleet uninstall -y of file, which must converge.
func (b *fleetBed) uninstalled(file string, purge bool) *fleetrun.Result {
	b.t.Helper()
	rec := &event.Recorder{}
	res, err := (&fleetrun.Uninstall{Fleet: b.fleet("", file), Purge: purge, Timeout: fleetReadiness, Events: rec}).Run(context.Background(), nil)
	b.record(rec.Events)
	if err != nil {
		b.t.Fatalf("fleet uninstall: %v", err)
	}
	return res
}

// installSpec installs spec in context ctx, as install -y does.
func (b *fleetBed) installSpec(ctx string, opts spec.Options) error {
	in := &action.Install{Config: b.config("", ctx), Spec: opts, ReadinessTimeout: fleetReadiness, HistoryMax: action.DefaultHistoryMax}
	res, err := in.Run(context.Background(), nil)
	b.record(res)
	return err
}

// mustInstallSpec is installSpec that must succeed.
func (b *fleetBed) mustInstallSpec(ctx string, opts spec.Options) {
	b.t.Helper()
	if err := b.installSpec(ctx, opts); err != nil {
		b.t.Fatalf("install in %s: %v", ctx, err)
	}
}

// verifySpec is verify-install of spec in context ctx, which must pass.
func (b *fleetBed) verifySpec(ctx string, opts spec.Options) {
	b.t.Helper()
	chk := action.Verify(b.config("", ctx))
	chk.Spec = &opts
	res := b.checked(chk.Run)
	if res.Failed {
		b.t.Errorf("verify-install in %s fails:\n%s", ctx, fleetFailures(res.Report))
	}
}

// link makes the link create-remote-secret --context from --name name --apply-to into
// makes.
func (b *fleetBed) link(from, name, into string) {
	b.t.Helper()
	res, err := (&action.CreateRemoteSecret{Config: b.config("", from), Name: name, ApplyTo: into, CreateServiceAccount: true}).Run(context.Background(), nil)
	if err != nil {
		b.t.Fatalf("create-remote-secret --context %s --name %s --apply-to %s: %v", from, name, into, err)
	}
	b.record(res)
}

// linkAs makes the link a fleet dump's command line ("istioctl create-remote-secret
// --context X --name Y --apply-to Z") names.
func (b *fleetBed) linkAs(command string) {
	b.t.Helper()
	flags := map[string]string{}
	args := strings.Fields(strings.TrimPrefix(command, "istioctl create-remote-secret "))
	for i := 0; i+1 < len(args); i += 2 {
		flags[args[i]] = args[i+1]
	}
	if len(flags) != 3 || flags["--context"] == "" || flags["--name"] == "" || flags["--apply-to"] == "" {
		b.t.Fatalf("the dump's link command %q is not --context, --name and --apply-to", command)
	}
	b.link(flags["--context"], flags["--name"], flags["--apply-to"])
}

// remoteClusters is remote-clusters in context ctx.
func (b *fleetBed) remoteClusters(ctx string) *action.RemoteClustersResult {
	b.t.Helper()
	res, err := (&action.RemoteClusters{Config: b.config("", ctx)}).Run(context.Background())
	if err != nil {
		b.t.Fatalf("remote-clusters in %s: %v", ctx, err)
	}
	b.record(res)
	return res
}

// purge removes what a test installed and linked, so each run and every later test of the
// shared bed starts clean.
func (b *fleetBed) purge() {
	b.t.Helper()
	ctx := context.Background()
	for _, c := range b.bed.Clusters {
		u := &action.Uninstall{Config: b.config("", c.Context), Purge: true, IgnoreNotFound: true, Timeout: fleetReadiness}
		if _, err := u.Run(ctx, nil); err != nil {
			b.t.Errorf("purging %s: %v", c.Context, err)
		}
		harness.ClearLinks(c)
	}
}

// collectTokens remembers every ServiceAccount token the bed's istio namespaces hold now.
func (b *fleetBed) collectTokens() { b.said.CollectTokens(b.t, b.bed) }

// noCredentialSaid fails t when anything a run said holds a credential.
func (b *fleetBed) noCredentialSaid(t *testing.T) { b.said.NoCredential(t, b.bed, 1, 0) }

// fleetWant is a result a report must hold: in a section beginning with section, saying
// says in its object, message or diff.
type fleetWant struct{ section, says string }

// fleetHolds fails t unless rep holds each want, failed when failing says so.
func fleetHolds(t *testing.T, what string, rep *check.Report, failing bool, wants ...fleetWant) {
	t.Helper()
	for _, w := range wants {
		if !slices.ContainsFunc(rep.Results, func(r check.Result) bool {
			return strings.HasPrefix(r.Section, w.section) && strings.Contains(r.Object+": "+r.Message+" "+r.Diff, w.says) && (!failing || r.Failing())
		}) {
			t.Errorf("%s: no result in %q saying %q (failed: %v) in\n%s", what, w.section, w.says, failing, fleetLines(rep, failing))
		}
	}
}

// fleetFailures are the failed results of rep, a line each.
func fleetFailures(rep *check.Report) string { return fleetLines(rep, true) }

func fleetLines(rep *check.Report, failedOnly bool) string {
	var out []string
	for _, r := range rep.Results {
		if !failedOnly || r.Failing() {
			out = append(out, r.Section+": "+r.Object+": "+r.Message)
		}
	}
	return strings.Join(out, "\n")
}

// fleetDumped is what fleet dump says, each cluster's IstioOperator written to a file.
type fleetDumped struct {
	*fleetrun.Dump
	specs map[string]string
}

func fleetDumpOf(t *testing.T, b *fleetBed, file string) *fleetDumped {
	t.Helper()
	dump, err := b.fleet("", file).Dump(context.Background())
	if err != nil {
		t.Fatalf("fleet dump: %v", err)
	}
	d := &fleetDumped{Dump: dump, specs: map[string]string{}}
	for _, c := range dump.Clusters {
		out, err := yaml.Marshal(c.IstioOperator)
		if err != nil {
			t.Fatal(err)
		}
		d.specs[c.Name] = harness.SpecFile(t, c.Name+".yaml", string(out))
	}
	return d
}

// spec is the dumped IstioOperator of cluster name, as install -f takes it.
func (d *fleetDumped) spec(name string) spec.Options {
	return spec.Options{Files: []string{d.specs[name]}}
}

// linksInto are the namespace/name of the links the dump puts into cluster, sorted.
func (d *fleetDumped) linksInto(cluster string) []string {
	var out []string
	for _, l := range d.Links {
		if l.Into == cluster {
			out = append(out, l.Secret)
		}
	}
	sort.Strings(out)
	return out
}

// fleetLinkSecrets are the link Secrets (istio/multiCluster=true) c holds, sorted.
func fleetLinkSecrets(t *testing.T, c *cluster.Cluster) []string {
	t.Helper()
	list, err := c.Kube.CoreV1().Secrets("").List(context.Background(), metav1.ListOptions{LabelSelector: "istio/multiCluster=true"})
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range list.Items {
		out = append(out, s.Namespace+"/"+s.Name)
	}
	sort.Strings(out)
	return out
}

// linksAsDumped fails t unless each cluster holds exactly the links the dump lists.
func (d *fleetDumped) linksAsDumped(t *testing.T, b *fleetBed) {
	t.Helper()
	for _, c := range d.Clusters {
		if got, want := fleetLinkSecrets(t, b.member(c.Context)), d.linksInto(c.Name); !slices.Equal(got, want) {
			t.Errorf("%s holds the links %v, fleet dump lists %v", c.Name, got, want)
		}
	}
}

// versions are harness.ObjectVersions of every bed cluster, keyed by context.
func (b *fleetBed) versions() map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, c := range b.bed.Clusters {
		out[c.Context] = harness.ObjectVersions(b.t, c)
	}
	return out
}

// fleetBedDiff is harness.VersionsDiff per cluster, each line prefixed with its context,
// sorted; token Secrets aside when tokens is false (their names are generated).
func fleetBedDiff(before, after map[string]map[string]string, tokens bool) []string {
	var out []string
	for ctx, b := range before {
		for _, d := range harness.VersionsDiff(b, after[ctx]) {
			if tokens || !strings.Contains(d, "Secret/istio-system/istio-reader-service-account-istio-remote-secret-token") {
				out = append(out, ctx+": "+d)
			}
		}
	}
	sort.Strings(out)
	return out
}

// fleetEdited writes the fleet file at file, edited by edit, beside it (as name: a cacerts
// directory is relative to it) or into a directory of its own when files are given (name
// to content, written beside it).
func fleetEdited(t *testing.T, file, name string, files map[string][]byte, edit func(spec map[string]any)) string {
	t.Helper()
	in, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	var f map[string]any
	if err := yaml.Unmarshal(in, &f); err != nil {
		t.Fatal(err)
	}
	edit(f["spec"].(map[string]any))
	out, err := yaml.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Dir(file)
	if files != nil {
		dir = t.TempDir()
	}
	for p, data := range files {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, p)), 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, p), data, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, out, 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// fleetWithout is the fleet file without the named clusters, beside it.
func fleetWithout(t *testing.T, file string, names ...string) string {
	t.Helper()
	return fleetEdited(t, file, "fleet-without-"+strings.Join(names, "-")+".yaml", nil, func(spec map[string]any) {
		var kept []any
		for _, c := range spec["clusters"].([]any) {
			if !slices.Contains(names, c.(map[string]any)["name"].(string)) {
				kept = append(kept, c)
			}
		}
		spec["clusters"] = kept
	})
}

// fleetOutcomes are the fleet's done's clusters and links, a "name outcome" (clusters) or
// "secret into from outcome" (links) line each.
func fleetOutcomes(o event.FleetOutcome) []string {
	var out []string
	for _, c := range o.Clusters {
		out = append(out, strings.Join([]string{c.Cluster, c.Role, string(c.Outcome)}, " "))
	}
	for _, l := range o.Links {
		out = append(out, strings.Join([]string{l.Secret, l.Into, l.From, string(l.Outcome)}, " "))
	}
	return out
}

// fleetHas fails t unless the fleet run's outcome has each row (fleetOutcomes' lines).
func fleetHas(t *testing.T, what string, res *fleetrun.Result, rows ...string) {
	t.Helper()
	if res == nil {
		t.Fatalf("%s: no result", what)
	}
	got := fleetOutcomes(res.FleetOutcome)
	for _, r := range rows {
		if !slices.Contains(got, r) {
			t.Errorf("%s: no %q in\n  %s", what, r, strings.Join(got, "\n  "))
		}
	}
}
