package harness

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/istioctl-installer/istioctl/pkg/cmd"
)

func TestWithin(t *testing.T) {
	n := 0
	if err := Within(time.Second, time.Millisecond, func() (bool, string) { n++; return n == 3, "not yet" }); err != nil || n != 3 {
		t.Errorf("Within: %v after %d asks, want nil after 3", err, n)
	}
	n = 0
	err := Within(30*time.Millisecond, 10*time.Millisecond, func() (bool, string) { n++; return false, "still " + strings.Repeat("x", n) })
	if err == nil || !strings.HasPrefix(err.Error(), "not so after 30ms: still x") || !strings.HasSuffix(err.Error(), strings.Repeat("x", n)) {
		t.Errorf("Within's timeout: %v, want the last reason (ask %d)", err, n)
	}
}

// fatalTB records a Fatalf instead of stopping the goroutine.
type fatalTB struct {
	testing.TB
	msg string
}

func (f *fatalTB) Helper() {}
func (f *fatalTB) Fatalf(format string, args ...any) {
	f.msg = fmt.Sprintf(format, args...)
}

func TestEventuallyTimeout(t *testing.T) {
	f := &fatalTB{TB: t}
	Eventually(f, 10*time.Millisecond, "the pod is ready", func() (bool, string) { return false, "phase Pending" })
	if want := "the pod is ready: not so after 10ms: phase Pending"; f.msg != want {
		t.Errorf("Eventually failed with %q, want %q", f.msg, want)
	}
	f = &fatalTB{TB: t}
	Eventually(f, time.Second, "at once", func() (bool, string) { return true, "" })
	if f.msg != "" {
		t.Errorf("Eventually of a holding condition failed: %s", f.msg)
	}
}

func TestSpecFile(t *testing.T) {
	for _, tc := range []struct{ body, want string }{
		{"\n\nspec:\n  profile: demo\n", "spec:\n  profile: demo\n"},
		{OperatorHeader + "spec: {}\n", "apiVersion: install.istio.io/v1alpha1\nkind: IstioOperator\nspec: {}\n"},
		{"", ""},
	} {
		p := SpecFile(t, "spec.yaml", tc.body)
		if filepath.Base(p) != "spec.yaml" {
			t.Errorf("SpecFile wrote %s, want a file spec.yaml", p)
		}
		got, err := os.ReadFile(p)
		if err != nil || string(got) != tc.want {
			t.Errorf("SpecFile(%q) wrote %q (%v), want %q", tc.body, got, err, tc.want)
		}
	}
}

func TestEvents(t *testing.T) {
	type ev struct {
		Type   string `json:"type"`
		Object string `json:"object"`
	}
	stream := `{"type":"applied","object":"Deployment/istio-system/istiod"}
{"type":"done","exitCode":0}
`
	got, err := ParseEvents[ev](stream)
	want := []ev{{"applied", "Deployment/istio-system/istiod"}, {"done", ""}}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ParseEvents: %v %v, want %v", got, err, want)
	}
	if got, err := ParseEvents[ev](""); err != nil || len(got) != 0 {
		t.Errorf("ParseEvents of nothing: %v %v", got, err)
	}
	if _, err := ParseEvents[ev](stream + "✔ Installation complete\n"); err == nil || !strings.Contains(err.Error(), `not an event: "✔ Installation complete"`) {
		t.Errorf("ParseEvents of a text line: %v, want it named", err)
	}
	long := `{"type":"applied","object":"` + strings.Repeat("x", 2<<20) + `"}`
	if got, err := ParseEvents[ev](long); err != nil || len(got) != 1 {
		t.Errorf("ParseEvents of a 2 MiB line: %d events, %v", len(got), err)
	}
}

func TestLines(t *testing.T) {
	var l Lines
	early := l.When(func(s string) bool { return s == "b" })
	_, _ = l.Write([]byte("a\nb"))
	select {
	case <-early:
		t.Fatal("a partial line matched")
	default:
	}
	_, _ = l.Write([]byte("\nc\n"))
	<-early
	<-l.When(func(s string) bool { return s == "a" }) // written already
	if l.String() != "a\nb\nc\n" {
		t.Errorf("Lines kept %q", l.String())
	}
}

func TestReadAuditWrites(t *testing.T) {
	got, err := ReadAuditWrites("testdata/audit.log")
	want := map[string]float64{
		"POST namespaces 201": 1, "POST configmaps 201": 1, "PATCH configmaps 200": 1,
		"DELETE services 404": 1, "DELETECOLLECTION secrets 200": 1,
	}
	if err != nil || !reflect.DeepEqual(got, want) {
		t.Errorf("ReadAuditWrites: %v %v, want %v", got, err, want)
	}
	if _, err := ReadAuditWrites("testdata/no-such.log"); err == nil {
		t.Error("ReadAuditWrites of a missing log: no error")
	}
	later := map[string]float64{"POST namespaces 201": 1, "POST configmaps 201": 3, "PATCH configmaps 200": 1, "PUT services 200": 1,
		"DELETE services 404": 1, "DELETECOLLECTION secrets 200": 1}
	if d, want := WritesBetween(got, later), []string{"POST configmaps 201 ×2", "PUT services 200 ×1"}; !reflect.DeepEqual(d, want) {
		t.Errorf("WritesBetween: %q, want %q", d, want)
	}
	if d := WritesBetween(got, got); d != nil {
		t.Errorf("WritesBetween of one reading: %q", d)
	}
}

func TestRequestFilters(t *testing.T) {
	reqs := []string{
		"GET /api/v1/namespaces/istio-system/configmaps [metadata]",
		"PATCH /api/v1/namespaces/istio-system/configmaps/istio?fieldManager=istioctl",
		"POST /apis/coordination.k8s.io/v1/namespaces/kube-system/leases",
		"PUT /apis/coordination.k8s.io/v1/namespaces/kube-system/leases/istioctl-lock",
		"PATCH /api/v1/namespaces/istio-system/services/istiod?dryRun=All",
		"HEAD /version",
		"GET /api/v1/namespaces/istio-system/configmaps [metadata]",
	}
	if got, want := Writes(reqs), []string{reqs[1], reqs[2], reqs[3], reqs[4]}; !reflect.DeepEqual(got, want) {
		t.Errorf("Writes: %q, want %q", got, want)
	}
	if got, want := InstallWrites(reqs), []string{reqs[1], reqs[4]}; !reflect.DeepEqual(got, want) {
		t.Errorf("InstallWrites: %q, want %q", got, want)
	}
	if got, want := DryRuns(reqs), []string{reqs[4]}; !reflect.DeepEqual(got, want) {
		t.Errorf("DryRuns: %q, want %q", got, want)
	}
	if got, want := RepeatedMetadataLists(reqs), []string{reqs[0]}; !reflect.DeepEqual(got, want) {
		t.Errorf("RepeatedMetadataLists: %q, want %q", got, want)
	}
}

func TestExitCode(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want int
	}{
		{nil, 0},
		{errors.New("boom"), 1},
		{&cmd.ExitError{Code: 3}, 3},
		{cmd.Usagef("no such flag"), 64},
	} {
		if got := ExitCode(tc.err); got != tc.want {
			t.Errorf("ExitCode(%v) = %d, want %d", tc.err, got, tc.want)
		}
	}
}

// TestRunInProcess runs commands that need no cluster.
func TestRunInProcess(t *testing.T) {
	r := Istioctl{T: t}.Run("version", "--remote=false")
	if r.Err != nil || r.Code != 0 || r.Stdout == "" || r.ErrorLine() != "" || r.Output() != r.Stdout+r.Stderr {
		t.Errorf("version: %+v", r)
	}
	r = Istioctl{T: t}.Run("no-such-command")
	if r.Err == nil || r.Code != 64 || r.ErrorLine() != "Error: "+r.Err.Error()+"\n" || !strings.HasSuffix(r.Output(), r.ErrorLine()) {
		t.Errorf("a bad command: code %d, error line %q, output %q", r.Code, r.ErrorLine(), r.Output())
	}
	if out, _, err := Run(t, "version", "--remote=false"); err != nil || out == "" {
		t.Errorf("Run version: %q %v", out, err)
	}
}
