package printer

import (
	"bytes"
	"testing"

	"github.com/fatih/color"

	"github.com/istioctl-installer/istioctl/operator/check"
	"github.com/istioctl-installer/istioctl/operator/event"
)

// The lines of an install that relies on pieces outside its spec (the external_*_e2e tests
// in operator/action judge the events; these, how they read): a check passed, an object
// adopted, an uninstall that leaves the control plane, a gateway it removes, a pruned object.
func TestExternalEventsText(t *testing.T) {
	color.NoColor = true
	for _, tc := range []struct {
		e    event.Event
		want string
	}{
		{event.Event{Type: event.Check, Object: "Deployment/istio-system/istiod", Message: "revision default, version 1.31.0, ready"},
			"✔ Deployment/istio-system/istiod: revision default, version 1.31.0, ready\n"},
		{event.Event{Type: event.Warning, Object: "ServiceAccount/ns/istio-cni", Message: "adopted from field manager by-hand: this install now owns it"},
			"! ServiceAccount/ns/istio-cni: adopted from field manager by-hand: this install now owns it\n"},
		{event.Event{Type: event.Warning, Message: "these gateways are removed, and the traffic they carry stops:", Details: []string{"Deployment/istio-gateways/istio-ingressgateway"}},
			"! these gateways are removed, and the traffic they carry stops:\n    Deployment/istio-gateways/istio-ingressgateway\n"},
		{event.Event{Type: event.Plan, PlanDetail: event.PlanDetail{Leave: []string{"Base", "Pilot"}}},
			"Leaving Base, Pilot alone, and the revision's tags and install records: this spec relies on them and does not install them.\n"},
	} {
		var b bytes.Buffer
		NewEvents(&b, Text).Emit(tc.e)
		if b.String() != tc.want {
			t.Errorf("%s:\n%q\nwant\n%q", tc.e.Type, b.String(), tc.want)
		}
	}
	// With -v, a line per pruned object.
	var b bytes.Buffer
	NewEvents(&b, Text, EventOptions{Objects: true}).Emit(event.Event{Type: event.Pruned, Object: "DaemonSet/ns/istio-cni-node", ObjectChange: event.ObjectChange{Action: event.ActionPruned}})
	if want := "  DaemonSet/ns/istio-cni-node removed\n"; b.String() != want {
		t.Errorf("pruned:\n%q\nwant\n%q", b.String(), want)
	}
}

// precheck -v of a spec relying on pieces outside it: each result on a line with its
// object, ✔ or ✘.
func TestExternalReportText(t *testing.T) {
	color.NoColor = true
	rep := &check.Report{Command: "precheck", Kind: check.KindPrecheck, Results: []check.Result{
		{Check: "ca-plugged-in", Section: "External", Severity: check.Error, Passed: true, Object: "Secret/ns/cacerts", Message: "CA CN=Test Intermediate CA, valid until 2030"},
		{Check: "ca-plugged-in", Section: "External", Severity: check.Error, Object: "Secret/ns/cacerts", Message: "ca-key.pem does not match the certificate in ca-cert.pem"},
	}}
	var b bytes.Buffer
	if err := Report(&b, rep, Text); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"✔ Secret/ns/cacerts: CA CN=Test Intermediate CA, valid until 2030\n", "✘ Secret/ns/cacerts: ca-key.pem does not match the certificate in ca-cert.pem\n"} {
		if !bytes.Contains(b.Bytes(), []byte(want)) {
			t.Errorf("report lacks %q:\n%s", want, b.String())
		}
	}
}
