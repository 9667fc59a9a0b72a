package printer

import (
	"bytes"
	"encoding/json"
	"regexp"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/operator/revision"
	"github.com/istioctl-installer/istioctl/operator/skew"
)

// x revision list's text names each namespace (its label, and tag) and each pod under the
// revision that injects it, with a proxy out of skew marked and its rule; its JSON is the
// list as operator/action's TestRevisionListE2E reads it.
func TestRevisionsText(t *testing.T) {
	old := skew.Proxy("1.30.0", "1.27.2")
	revs := []*revision.Revision{
		{Name: "a", Namespace: "istio-system", Version: "1.29.4", Tags: []string{"default"},
			Components: []revision.Component{{Name: "Pilot", Object: "Deployment/istio-system/istiod-a", Version: "1.29.4", Ready: "1/1"}},
			Namespaces: []revision.Selection{{Namespace: "by-tag", Label: "istio.io/rev=default", Tag: "default"},
				{Namespace: "enabled", Label: "istio-injection=enabled", Tag: "default"}},
			Workloads: []revision.Workload{{Namespace: "by-tag", Kind: "Deployment", Name: "app", Pods: []revision.Proxy{{Pod: "app-1", Version: "1.29.4"}}},
				{Namespace: "enabled", Kind: "Deployment", Name: "app", Pods: []revision.Proxy{{Pod: "app-2", Version: "1.29.4"}}}}},
		{Name: "b", Namespace: "istio-system", Version: "1.30.0", Tags: []string{"prod"},
			Namespaces: []revision.Selection{{Namespace: "named", Label: "istio.io/rev=prod", Tag: "prod"}, {Namespace: "direct", Label: "istio.io/rev=b"}},
			Workloads: []revision.Workload{{Namespace: "direct", Kind: "Deployment", Name: "app", Pods: []revision.Proxy{{Pod: "app-3", Version: "1.30.0"}}},
				{Namespace: "plain", Kind: "Pod", Name: "old-proxy", Pods: []revision.Proxy{{Pod: "old-proxy", Version: "1.27.2", Skew: &old}}}}},
	}
	var out bytes.Buffer
	if err := Revisions(&out, revs, Text); err != nil {
		t.Fatal(err)
	}
	text := out.String()
	blocks := map[string]string{}
	for _, b := range strings.Split(text, "\nREVISION ") {
		name, _, _ := strings.Cut(strings.TrimPrefix(b, "REVISION "), ":")
		blocks[name] = b
	}
	for _, r := range revs {
		for _, s := range r.Namespaces {
			label := s.Label
			if s.Tag != "" {
				label += ", tag " + s.Tag
			}
			if !strings.Contains(blocks[r.Name], "    "+s.Namespace+" ("+label+")") {
				t.Errorf("namespace %s (%s) not under revision %s:\n%s", s.Namespace, label, r.Name, text)
			}
		}
		for _, wl := range r.Workloads {
			for _, p := range wl.Pods {
				if !regexp.MustCompile(`(?m)^      ` + regexp.QuoteMeta(p.Pod) + ` proxy `).MatchString(blocks[r.Name]) {
					t.Errorf("pod %s/%s not under revision %s:\n%s", wl.Namespace, p.Pod, r.Name, text)
				}
			}
		}
	}
	if !strings.Contains(blocks["b"], "old-proxy proxy 1.27.2 OUT OF SKEW: proxies 1.27.2 are 3 minor versions behind istiod 1.30.0") ||
		!strings.Contains(blocks["b"], "rule proxy-skew") {
		t.Errorf("old-proxy not marked out of skew with its rule:\n%s", text)
	}

	out.Reset()
	if err := Revisions(&out, revs, JSON); err != nil {
		t.Fatal(err)
	}
	var list struct{ Revisions []*revision.Revision }
	if err := json.Unmarshal(out.Bytes(), &list); err != nil {
		t.Fatal(err)
	}
	if got, want := revJSON(t, list.Revisions), revJSON(t, revs); got != want {
		t.Errorf("JSON read back:\n%s\nwant\n%s", got, want)
	}
}

func revJSON(t *testing.T, v any) string {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
