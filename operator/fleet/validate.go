package fleet

import (
	"fmt"
	"slices"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"

	"github.com/istioctl-installer/istioctl/operator/spec"
)

// fleetOwned are the values the fleet sets in every cluster from its own fields: a spec or
// overlay that sets them too would make two places say one thing.
var fleetOwned = []struct {
	path []string
	from string
}{
	{[]string{"spec", "values", "global", "meshID"}, "spec.meshID"},
	{[]string{"spec", "values", "global", "multiCluster", "clusterName"}, "the cluster's name"},
	{[]string{"spec", "values", "global", "network"}, "the cluster's network"},
	{[]string{"spec", "values", "global", "remotePilotAddress"}, "the cluster's remotePilotAddress"},
}

// validate checks the decoded fleet against itself and the kubeconfig's contexts.
func validate(d *decoder, contexts []string) {
	f := d.f
	switch {
	case f.Name == "":
		d.add(d.lineOr("metadata", d.line("")), "metadata.name", "is missing: the fleet's name labels the link Secrets it owns")
	case len(validation.IsDNS1123Label(f.Name)) > 0:
		d.add(d.line("metadata.name"), "metadata.name", fmt.Sprintf("%q is not a DNS-1123 label (lower-case letters, digits and '-', at most 63)", f.Name))
	}
	switch {
	case f.MeshID == "":
		d.add(d.lineOr("spec", d.line("")), "spec.meshID", "is missing: every cluster of a mesh carries one mesh ID (values.global.meshID)")
	case len(validation.IsValidLabelValue(f.MeshID)) > 0:
		d.add(d.line("spec.meshID"), "spec.meshID", fmt.Sprintf("%q is not a valid label value (it labels the link Secrets)", f.MeshID))
	}
	if len(f.Clusters) == 0 {
		d.add(d.lineOr("spec.clusters", d.lineOr("spec", 0)), "spec.clusters", "is empty: list the clusters of the mesh")
		return
	}
	if f.Shared != nil {
		d.owned(f.Shared, "spec.istioOperator")
	}
	names := map[string]int{}
	ctxs := map[string]int{}
	controlPlanes := 0
	ownCerts := 0
	for i, c := range f.Clusters {
		p := fmt.Sprintf("spec.clusters[%d]", i)
		at := func(field string) (int, string) {
			return d.lineOr(p+"."+field, c.Line), p + "." + field
		}
		// unique notes the line where value first stands in seen, or reports it again;
		// format takes the value and that first line.
		unique := func(seen map[string]int, field, value, format string) {
			l, fp := at(field)
			if first, dup := seen[value]; dup {
				d.add(l, fp, fmt.Sprintf(format, value, first))
			} else {
				seen[value] = l
			}
		}
		switch {
		case c.Name == "":
			d.add(c.Line, p+".name", "is missing: the cluster's name (values.global.multiCluster.clusterName, the ID its link Secrets carry)")
		case len(validation.IsDNS1123Label(c.Name)) > 0:
			l, fp := at("name")
			d.add(l, fp, fmt.Sprintf("%q is not a DNS-1123 label: a cluster ID is lower-case letters, digits and '-' (as create-remote-secret --name checks)", c.Name))
		default:
			unique(names, "name", c.Name, "%q names two clusters (first at line %d): cluster names are the mesh's cluster IDs and must be unique")
		}
		switch {
		case c.Context == "":
			d.add(c.Line, p+".context", "is missing: the kubeconfig context that reaches the cluster")
		case !slices.Contains(contexts, c.Context) && d.offline:
			l, fp := at("context")
			d.problems = append(d.problems, v1alpha1.Problem{Source: d.source, Line: l, Path: fp, Warning: true,
				Msg: fmt.Sprintf("context %q is not in the kubeconfig%s: not checked (install, precheck and verify need it)", c.Context, knownContexts(contexts))})
			unique(ctxs, "context", c.Context, "context %q is also the context of the cluster at line %d: one cluster cannot be two members of the fleet")
		case !slices.Contains(contexts, c.Context):
			l, fp := at("context")
			d.add(l, fp, fmt.Sprintf("context %q is not in the kubeconfig%s: add it, or pass --kubeconfig with the file that has it", c.Context, knownContexts(contexts)))
		default:
			unique(ctxs, "context", c.Context, "context %q is also the context of the cluster at line %d: one cluster cannot be two members of the fleet")
		}
		if c.Network == "" && c.Role != RoleExternal {
			d.add(c.Line, p+".network", "is missing: the cluster's network (values.global.network); clusters that reach each other's pods directly share one")
		}
		if d.role(c, p, at) {
			controlPlanes++
		}
		if c.CACerts != nil {
			ownCerts++
			if f.CACerts != nil {
				l, fp := at("cacerts")
				d.add(l, fp, fmt.Sprintf("spec.trust.cacerts (line %d) already gives every cluster one set: give either one set for all or one per cluster", d.line("spec.trust.cacerts")))
			}
		}
		if c.Overlay != nil {
			d.owned(c.Overlay, p+".overlay")
		}
	}
	if ownCerts > 0 && ownCerts < len(f.Clusters) && f.CACerts == nil {
		for i, c := range f.Clusters {
			if c.CACerts == nil {
				d.add(c.Line, fmt.Sprintf("spec.clusters[%d].cacerts", i), "is missing while other clusters give their own: every cluster gives one (from one root), or spec.trust.cacerts gives one set for all")
			}
		}
	}
	if controlPlanes == 0 {
		d.add(d.lineOr("spec.clusters", 0), "spec.clusters", "has no primary or external cluster: someone must run istiod")
	}
	d.primaries()
}

// role checks a cluster's role and what goes with it, and says whether the cluster runs
// istiod.
func (d *decoder) role(c *Cluster, p string, at func(string) (int, string)) bool {
	switch c.Role {
	case "":
		d.add(c.Line, p+".role", "is missing: one of "+strings.Join(Roles, ", "))
	case RolePrimary, RoleExternal:
		if c.Primary != "" {
			l, fp := at("primary")
			d.add(l, fp, fmt.Sprintf("a %s runs its own istiod: only a remote or config cluster names a primary", c.Role))
		}
		if c.RemotePilotAddress != "" {
			l, fp := at("remotePilotAddress")
			d.add(l, fp, fmt.Sprintf("a %s runs its own istiod: only a remote or config cluster points at another's", c.Role))
		}
	case RoleRemote, RoleConfig:
		if c.Primary == "" {
			d.add(c.Line, p+".primary", fmt.Sprintf("is missing: the cluster whose istiod serves this %s", c.Role))
		}
	default:
		l, fp := at("role")
		d.add(l, fp, fmt.Sprintf("%q is not one of %s", c.Role, strings.Join(Roles, ", ")))
	}
	return c.Role == RolePrimary || c.Role == RoleExternal
}

// primaries checks what each remote and config cluster names as its primary: a cluster of
// the fleet that runs istiod, reached without a cycle.
func (d *decoder) primaries() {
	f := d.f
	configs := map[string]int{}
	for i, c := range f.Clusters {
		if c.Primary == "" || (c.Role != RoleRemote && c.Role != RoleConfig) {
			continue
		}
		p := fmt.Sprintf("spec.clusters[%d].primary", i)
		line := d.lineOr(p, c.Line)
		target := f.Cluster(c.Primary)
		switch {
		case target == nil:
			d.add(line, p, fmt.Sprintf("%q is not a cluster of the fleet%s", c.Primary, Suggestion(c.Primary, f)))
		case target == c:
			d.add(line, p, fmt.Sprintf("%q is this cluster itself: a %s's istiod runs in another cluster", c.Primary, c.Role))
		case !target.Role.ControlPlane():
			if chain, ok := cycle(f, c); ok {
				d.add(line, p, "cycle: "+strings.Join(chain, " → ")+": a remote's primary must run istiod (role primary or external)")
			} else {
				d.add(line, p, fmt.Sprintf("%q is a %s, not a primary: a remote's primary must run istiod (role primary or external)", c.Primary, target.Role))
			}
		case c.Role == RoleConfig && target.Role != RoleExternal:
			d.add(line, p, fmt.Sprintf("%q is a %s: a config cluster's control plane is an external cluster (role external)", c.Primary, target.Role))
		case c.Role == RoleConfig:
			if first, dup := configs[target.Name]; dup {
				d.add(line, p, fmt.Sprintf("external cluster %q already has the config cluster at line %d: an external istiod reads one config cluster", target.Name, first))
			}
			configs[target.Name] = c.Line
		}
	}
	for i, c := range f.Clusters {
		if c.Role == RoleExternal && configs[c.Name] == 0 {
			d.add(c.Line, fmt.Sprintf("spec.clusters[%d].role", i), fmt.Sprintf("external cluster %q has no config cluster: add one with role config and primary %s", c.Name, c.Name))
		}
	}
}

// cycle follows the primaries from c; ok when they lead back to c.
func cycle(f *Fleet, c *Cluster) ([]string, bool) {
	chain := []string{c.Name}
	seen := map[string]bool{c.Name: true}
	for cur := f.Cluster(c.Primary); cur != nil; cur = f.Cluster(cur.Primary) {
		chain = append(chain, cur.Name)
		if cur == c {
			return chain, true
		}
		if seen[cur.Name] || cur.Role.ControlPlane() {
			return nil, false
		}
		seen[cur.Name] = true
	}
	return nil, false
}

// owned reports a value the fleet sets itself, set in a spec or overlay.
func (d *decoder) owned(doc *spec.Doc, at string) {
	for _, o := range fleetOwned {
		if _, ok := spec.Lookup(doc.Tree, o.path...); ok {
			p := strings.Join(o.path, ".")
			d.add(doc.Lines[p], at+strings.TrimPrefix(p, "spec"), "is set by the fleet from "+o.from+": remove it here")
		}
	}
}

// Suggestion is "; did you mean X?" for the cluster name closest to name.
func Suggestion(name string, f *Fleet) string {
	var names []string
	for _, c := range f.Clusters {
		names = append(names, c.Name)
	}
	return v1alpha1.Suggest(name, names)
}

func knownContexts(contexts []string) string {
	if len(contexts) == 0 {
		return " (it has none)"
	}
	return " (it has " + strings.Join(contexts, ", ") + ")"
}
