// Package readerchart renders a link's reader identity (link.Reader) from the charts. It is
// apart from link so that link, and what imports it to read link Secrets (fleet, the
// printers, their fuzz targets), does not link the charts and Helm's engine.
package readerchart

import (
	"fmt"
	"sort"
	"strings"

	"github.com/istioctl-installer/istioctl/operator/component"
	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/render"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Render renders the reader identity for the istio namespace ns from the charts in
// manifestsDir ("" for the embedded ones).
func Render(manifestsDir, ns, version string) (*link.Reader, error) {
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
