package printer

import (
	"bytes"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/check"
)

// A pre-write gate that stopped a run reads as the error install has always printed.
func TestBlocked(t *testing.T) {
	b := &check.Blocked{Gate: check.GateAdmission, Results: []check.Result{
		{Object: "Pod of Deployment/istio-system/istiod", Message: "refused by Pod Security: forbidden", Hint: "let the namespace admit these pods"},
		{Object: "ConfigMap/istio-system/extra", Message: "missing", Hint: "create it"},
	}}
	var w bytes.Buffer
	Blocked(&w, "", b)
	want := "Error: the cluster would refuse, or not run, what this install creates:\n" +
		"  ✘ Pod of Deployment/istio-system/istiod: refused by Pod Security: forbidden\n    hint: let the namespace admit these pods\n" +
		"  ✘ ConfigMap/istio-system/extra: missing\n    hint: create it\n" +
		"Nothing was written. Fix them, or install anyway with --force\n"
	if w.String() != want {
		t.Errorf("got\n%q\nwant\n%q", w.String(), want)
	}
}

// The ownership gate reads as its own refusal: every foreign object with its manager and
// hint, and --take-ownership (never --force) as what lifts it.
func TestBlockedOwnership(t *testing.T) {
	hint := "leave it to its manager, or delete it"
	b := &check.Blocked{Gate: check.GateOwnership, Results: []check.Result{
		{Object: "CustomResourceDefinition/gateways.networking.istio.io", Message: "managed by field manager helm", Hint: hint},
		{Object: "Deployment/istio-system/istiod", Message: "managed by Helm release istio-system/istiod", Hint: hint},
	}}
	var w bytes.Buffer
	Blocked(&w, "", b)
	want := "Error: objects this install would apply exist and were not installed by istioctl:\n" +
		"  ✘ CustomResourceDefinition/gateways.networking.istio.io: managed by field manager helm\n    hint: " + hint + "\n" +
		"  ✘ Deployment/istio-system/istiod: managed by Helm release istio-system/istiod\n    hint: " + hint + "\n" +
		"Nothing was written. Fix them, or adopt them with --take-ownership\n"
	if w.String() != want {
		t.Errorf("got\n%q\nwant\n%q", w.String(), want)
	}
}
