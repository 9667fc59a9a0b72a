package printer

import (
	"bytes"
	"io"
	"strings"
	"testing"

	"sigs.k8s.io/yaml"

	"github.com/istioctl-installer/istioctl/operator/event"
	"github.com/istioctl-installer/istioctl/operator/images"
	"github.com/istioctl-installer/istioctl/operator/mirror"
)

// TestFormatSetsOfferYAML: every format set that offers json offers yaml too.
func TestFormatSetsOfferYAML(t *testing.T) {
	for _, fs := range []Formats{EventFormats, ReportFormats, ListFormats, DocumentFormats, DumpFormats, ProfileDumpFormats} {
		if len(fs) == 0 || fs.Check(fs.Default()) != nil || !strings.Contains(fs.Help(), string(fs.Default())) {
			t.Errorf("%v: its default is no offered format", fs)
		}
		if fs.Check(JSON) == nil && fs.Check(YAML) != nil {
			t.Errorf("%v offers json but not yaml", fs)
		}
	}
	if got, want := ListFormats.Help(), "table, json, yaml, name, jsonpath=TEMPLATE or custom-columns=HEADER:PATH,..."; got != want {
		t.Errorf("list help %q, want %q", got, want)
	}
}

// TestYAMLBesideJSON: -o yaml, added where only json was (the event streams, images list
// and mirror), says what -o json says: each JSON line is a YAML document after ---.
func TestYAMLBesideJSON(t *testing.T) {
	code := 0
	events := []event.Event{
		{Type: event.Plan, Message: "3 objects", Total: 3, PlanDetail: event.PlanDetail{SchemaVersion: event.SchemaVersion}},
		{Type: event.Done, Message: "done", RunEnd: event.RunEnd{Operation: event.OperationInstall, Result: event.RunSucceeded, ExitCode: &code}},
	}
	list := []images.Image{{Component: "Pilot", Container: "discovery", Image: "docker.io/istio/pilot:1.30.0"}}
	for name, print := range map[string]func(*bytes.Buffer, Format){
		"events": func(b *bytes.Buffer, f Format) {
			s := NewEvents(b, f)
			for _, e := range events {
				s.Emit(e)
			}
		},
		"images list": func(b *bytes.Buffer, f Format) {
			if err := Images(b, io.Discard, list, f); err != nil {
				t.Fatal(err)
			}
		},
		"images mirror": func(b *bytes.Buffer, f Format) {
			p := NewMirrorEvents(b, f, false)
			p.Event(mirror.Planned{Source: "docker.io/istio/pilot:1.30.0", Target: "mirror.example/istio/pilot:1.30.0", Digest: "sha256:ab"})
			MirrorResult(b, mirror.Result{Planned: 1}, f)
		},
	} {
		var j, y bytes.Buffer
		print(&j, JSON)
		print(&y, YAML)
		jsonDocs := jsonDocs(j.String(), name == "images list")
		yamlDocs := strings.Split(y.String(), "---\n")
		if name != "images list" {
			if yamlDocs[0] != "" {
				t.Errorf("%s: -o yaml does not start with ---:\n%s", name, y.String())
			}
			yamlDocs = yamlDocs[1:]
		}
		if len(yamlDocs) != len(jsonDocs) {
			t.Fatalf("%s: %d YAML documents, %d JSON:\n%s\n%s", name, len(yamlDocs), len(jsonDocs), y.String(), j.String())
		}
		for i := range jsonDocs {
			fromYAML, err := yaml.YAMLToJSON([]byte(yamlDocs[i]))
			if err != nil {
				t.Fatal(err)
			}
			fromJSON, err := yaml.YAMLToJSON([]byte(jsonDocs[i]))
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fromYAML, fromJSON) {
				t.Errorf("%s: document %d says\n%s\nin YAML, \n%s\nin JSON", name, i, fromYAML, fromJSON)
			}
		}
	}
}

// jsonDocs are the documents of -o json: one (whole) or one per line (a stream).
func jsonDocs(s string, whole bool) []string {
	if whole {
		return []string{s}
	}
	return strings.Split(strings.TrimSuffix(s, "\n"), "\n")
}
