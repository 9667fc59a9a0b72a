// Package readerchart renders a link's reader identity (link.Reader) from the charts. It is
// apart from link so that link, and what imports it to read link Secrets (fleet, the
// printers, their fuzz targets), does not link the charts and Helm's engine.
package readerchart

import (
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// rendered holds what Render rendered in this process, by its arguments: a fleet run's
// links each need the reader, and rendering it (the default profile's Base and Pilot)
// costs them more than all their requests. Only the embedded charts are kept: a
// --manifests directory may change between two commands of one process (tests).
var rendered = struct {
	sync.Mutex
	m map[[2]string]*link.Reader
}{m: map[[2]string]*link.Reader{}}

// Render renders the reader identity for the istio namespace ns from the charts in
// manifestsDir ("" for the embedded ones). The caller owns what it returns.
func Render(manifestsDir, ns, version string) (*link.Reader, error) {
	if manifestsDir != "" {
		return render1(manifestsDir, ns, version)
	}
	rendered.Lock() // held while rendering: links asking at once wait for one render
	defer rendered.Unlock()
	key := [2]string{ns, version}
	r, ok := rendered.m[key]
	if !ok {
		var err error
		if r, err = render1(manifestsDir, ns, version); err != nil {
			return nil, err
		}
		rendered.m[key] = r
	}
	return r.DeepCopy(), nil
}

func render1(manifestsDir, ns, version string) (*link.Reader, error) {
	res, err := spec.Resolve(spec.Options{ManifestsDir: manifestsDir, Sets: []string{"values.global.istioNamespace=" + ns, "namespace=" + ns}})
	if err != nil {
		return nil, fmt.Errorf("resolving the default profile to render the reader identity: %w", err)
	}
	r, err := render.NewRenderer(manifestsDir)
	if err != nil {
		return nil, err
	}
	manifests, _, err := r.Render(res, component.Base, component.Pilot)
	if err != nil {
		return nil, fmt.Errorf("rendering the reader identity: %w", err)
	}
	owner := ownership.Owner{Namespace: ns, Version: version}
	out := &link.Reader{Namespace: ns}
	rank := map[string]int{"ServiceAccount": 0, "ClusterRole": 1, "ClusterRoleBinding": 2}
	for _, m := range manifests {
		for _, o := range m.Objects {
			keep := (o.GetKind() == "ServiceAccount" && o.GetName() == ownership.ReaderServiceAccount) ||
				((o.GetKind() == "ClusterRole" || o.GetKind() == "ClusterRoleBinding") && strings.HasPrefix(o.GetName(), ownership.ReaderClusterRolePrefix))
			if !keep {
				continue
			}
			c := o.DeepCopy()
			labels := c.GetLabels()
			if labels == nil {
				labels = map[string]string{}
			}
			for k, v := range owner.Labels(m.Instance.Name) {
				labels[k] = v
			}
			c.SetLabels(labels)
			out.Objects = append(out.Objects, c)
		}
	}
	sort.SliceStable(out.Objects, func(i, j int) bool { return rank[out.Objects[i].GetKind()] < rank[out.Objects[j].GetKind()] })
	if len(out.Objects) == 0 || out.Objects[0].GetKind() != "ServiceAccount" {
		return nil, fmt.Errorf("the charts render no %s in %s (values.global.enableReaderRBAC=false?)", ownership.ReaderServiceAccount, ns)
	}
	return out, nil
}
