package render

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/istioctl-installer/istioctl/pkg/testing/golden"
)

// Overlay paths as upstream reads them: [value] (or [:value]) selects the item of a list
// of scalars equal to value, or else the first one value matches as a regular expression;
// [key:value] on a list of scalars is the whole "key:value"; [-1] and an index past the end
// append; a patch without a value deletes; a dot inside [...] splits the path, so an
// unescaped one is an error (upstream patches nothing, silently). Unlike upstream, an exact match wins over an
// earlier item the value only matches as a regular expression. Each case patches istiod's container args and
// shows them after (or the error); testdata/overlays/scalar-lists.txt keeps the results.
func TestOverlayScalarListItems(t *testing.T) {
	const args = "spec.template.spec.containers.[name:discovery].args"
	const argsObjects = `
apiVersion: apps/v1
kind: Deployment
metadata: {name: istiod, namespace: istio-system}
spec:
  template:
    spec:
      containers:
      - name: discovery
        image: docker.io/istio/pilot:1.30.0
        args: [discovery, --monitoringAddr=:15014, --log_output_level=default:info, --domain, cluster.local, --maxAge=30m, --keepaliveMaxServerConnectionAge, 30m]
`
	var out strings.Builder
	for _, tc := range []struct{ name, patches string }{
		{"set an item by its value (the exact match, not the earlier --maxAge=30m the regular expression also matches)", `[{path: '` + args + `.[30m]', value: 1h}]`},
		{"set an item by [:value]", `[{path: '` + args + `.[:30m]', value: 2h}]`},
		{"delete an item by its value (no value)", `[{path: '` + args + `.[--domain]'}]`},
		{"delete an item by its value (value: null)", `[{path: '` + args + `.[discovery]', value: null}]`},
		{"delete a flag and its value", `[{path: '` + args + `.[--keepaliveMaxServerConnectionAge]'}, {path: '` + args + `.[30m]'}]`},
		{"a value holding a colon: [key:value] on a list of scalars", `[{path: '` + args + `.[--log_output_level=default:info]', value: '--log_output_level=default:debug'}]`},
		{"a regular expression, as upstream", `[{path: '` + args + `.[level=def]', value: '--log_output_level=all:warn'}]`},
		{"an anchored regular expression", `[{path: '` + args + `.[^--dom]', value: --domain2}]`},
		{"a dot inside [...] is an error: upstream splits the path there and patches nothing", `[{path: '` + args + `.[cluster.local]', value: example.org}]`},
		{"a dot inside [...] of a regular expression is an error too", `[{path: '` + args + `.[--log_output_level=.*]', value: '--log_output_level=all:warn'}]`},
		{"a dot inside [:...] is an error too", `[{path: '` + args + `.[:cluster.local]', value: example.org}]`},
		{"a regular expression picks the first item it matches", `[{path: '` + args + `.[=30m$]', value: --maxAge=1h}]`},
		{"an escaped dot", `[{path: '` + args + `.[cluster\.local]', value: example.org}]`},
		{"append with [-1]", `[{path: '` + args + `.[-1]', value: --caCertFile=/etc/ca.pem}]`},
		{"append with an index past the end", `[{path: '` + args + `.[99]', value: --x}]`},
		{"the value of a selector that matches nothing", `[{path: '` + args + `.[45m]', value: 1h}]`},
		{"delete what is not there", `[{path: '` + args + `.[nope]'}]`},
		{"delete with [-1]", `[{path: '` + args + `.[-1]'}]`},
		{"a value selector on a list of objects", `[{path: 'spec.template.spec.containers.[discovery].image', value: x}]`},
		{"an empty selector", `[{path: '` + args + `.[]', value: x}]`},
		{"an invalid regular expression is compared as text only", `[{path: '` + args + `.[(]', value: x}]`},
	} {
		inst, _, raw := pilot(t, "overlays: [{kind: Deployment, name: istiod, patches: "+tc.patches+"}]")
		objs, err := ParseObjects([]byte(argsObjects))
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "== %s\n   patches: %s\n", tc.name, tc.patches)
		if err := ApplyK8sSettings(objs, inst, raw, ""); err != nil {
			fmt.Fprintf(&out, "error: %v\n", err)
			continue
		}
		cs := objs[0].Object["spec"].(map[string]any)["template"].(map[string]any)["spec"].(map[string]any)["containers"].([]any)
		fmt.Fprintf(&out, "args: %v\n", cs[0].(map[string]any)["args"])
	}
	golden.Check(t, filepath.Join("../../testdata/overlays/scalar-lists.txt"), []byte(out.String()))
}
