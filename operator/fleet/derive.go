package fleet

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"

	"github.com/istioctl-installer/istioctl/operator/api/v1alpha1"
	"github.com/istioctl-installer/istioctl/operator/link"
	"github.com/istioctl-installer/istioctl/operator/ownership"
	"github.com/istioctl-installer/istioctl/operator/spec"
)

// Spec is what cluster c's IstioOperator resolves from, lowest precedence first: the
// fleet's shared spec, the cluster's overlay, then what the fleet sets itself (the role's
// profile and upstream's multi-cluster values), each field with the fleet file's line.
func (f *Fleet) Spec(c *Cluster) spec.Options {
	var docs []spec.Doc
	if f.Shared != nil {
		docs = append(docs, *f.Shared)
	}
	if c.Overlay != nil {
		docs = append(docs, *c.Overlay)
	}
	return spec.Options{Docs: append(docs, f.derived(c))}
}

// derived is the document of what the fleet sets in cluster c, by upstream's value names
// (istio.io's multi-cluster guides): the mesh ID, cluster name and network everywhere; on a
// primary that serves remotes values.global.externalIstiod; on a remote the remote profile,
// the injection path istiod serves it at (values.pilot.istiodRemote: upstream's
// values.istiodRemote is deprecated) and remotePilotAddress; on a config cluster also
// values.global.configCluster and values.pilot.configMap; on an external cluster
// externalIstiod and LOCAL_CLUSTER_SECRET_WATCHER (it reads the link Secrets in its own
// cluster), with its config cluster's name as its istiod's cluster ID.
func (f *Fleet) derived(c *Cluster) spec.Doc {
	idx := f.index(c)
	at := func(field string) int {
		if l, ok := f.lines[fmt.Sprintf("spec.clusters[%d].%s", idx, field)]; ok {
			return l
		}
		return c.Line
	}
	lines := v1alpha1.Lines{"spec.values.global.meshID": f.lines["spec.meshID"]}
	global := map[string]any{"meshID": f.MeshID}
	values := map[string]any{"global": global}
	sp := map[string]any{"values": values}
	name := c.Name
	if c.Role == RoleExternal {
		for _, o := range f.Served(c) {
			if o.Role == RoleConfig {
				name = o.Name
			}
		}
	}
	global["multiCluster"] = map[string]any{"clusterName": name}
	lines["spec.values.global.multiCluster.clusterName"] = at("name")
	if c.Network != "" {
		global["network"] = c.Network
		lines["spec.values.global.network"] = at("network")
	}
	switch c.Role {
	case RolePrimary:
		if len(f.Served(c)) > 0 {
			global["externalIstiod"] = true
			lines["spec.values.global.externalIstiod"] = at("role")
		}
	case RoleExternal:
		global["externalIstiod"] = true
		values["pilot"] = map[string]any{"env": map[string]any{"LOCAL_CLUSTER_SECRET_WATCHER": "true"}}
		lines["spec.values.global.externalIstiod"], lines["spec.values.pilot.env"] = at("role"), at("role")
	case RoleRemote, RoleConfig:
		sp["profile"] = "remote"
		lines["spec.profile"] = at("role")
		pilot := map[string]any{"istiodRemote": map[string]any{"injectionPath": InjectionPath(c)}}
		values["pilot"] = pilot
		lines["spec.values.pilot.istiodRemote.injectionPath"] = at("name")
		if c.RemotePilotAddress != "" {
			global["remotePilotAddress"] = c.RemotePilotAddress
			lines["spec.values.global.remotePilotAddress"] = at("remotePilotAddress")
			// The namespace annotation upstream's guides add by hand before the remote's
			// install: the install writes it before anything else. (spec.external.remote
			// needs the address; without one the install fills both in.)
			sp["external"] = map[string]any{"remote": map[string]any{"controlPlaneClusters": c.Primary}}
			lines["spec.external.remote.controlPlaneClusters"] = at("primary")
		}
		if c.Role == RoleConfig {
			global["configCluster"] = true
			pilot["configMap"] = true
			lines["spec.values.global.configCluster"], lines["spec.values.pilot.configMap"] = at("role"), at("role")
		}
	}
	return spec.Doc{Source: f.Source, Tree: map[string]any{"apiVersion": v1alpha1.APIVersion, "kind": v1alpha1.KindName, "spec": sp}, Lines: lines}
}

// InjectionPath is where a remote's injection webhook reaches its primary's istiod:
// upstream's /inject/cluster/<cluster>/net/<network>.
func InjectionPath(c *Cluster) string {
	return fmt.Sprintf("/inject/cluster/%s/net/%s", c.Name, c.Network)
}

func (f *Fleet) index(c *Cluster) int {
	for i, o := range f.Clusters {
		if o == c {
			return i
		}
	}
	return -1
}

// Link is one link Secret the fleet makes: the credentials of cluster From, in cluster
// Into, whose istiod reads From with them.
type Link struct {
	Into, From *Cluster
	Type       link.Type
	// Key is the Secret's data key: the kubeconfig's.
	Key string
	// Secret is the link Secret without its data (the kubeconfig is made at install):
	// name, namespace, labels (with the fleet's), annotation and the data key.
	Secret *corev1.Secret
}

// Links are the links the fleet makes, in the order of the clusters: every cluster that
// runs istiod reads every other cluster of the mesh (a primary needs the endpoints of all,
// and a remote's primary its API server); an external cluster reads its config cluster
// through the config link (istio-kubeconfig) and the others as remotes. namespace is each
// cluster's istio namespace, where its istiod reads link Secrets.
func (f *Fleet) Links(namespace func(*Cluster) string) []Link {
	var out []Link
	for _, into := range f.Clusters {
		if !into.Role.ControlPlane() {
			continue
		}
		for _, from := range f.Clusters {
			if from == into || from.Role == RoleExternal {
				continue
			}
			t := link.TypeRemote
			if from.Role == RoleConfig && from.Primary == into.Name {
				t = link.TypeConfig
			}
			s := link.Secret(t, from.Name, namespace(into), nil)
			for k, v := range ownership.FleetLabels(f.MeshID, f.Name) {
				s.Labels[k] = v
			}
			s.Annotations[ownership.AnnotationFleetFrom] = from.Context
			s.Data = nil
			out = append(out, Link{Into: into, From: from, Type: t, Key: link.DataKey(t, from.Name), Secret: s})
		}
	}
	return out
}

// MultiNetwork says the fleet's clusters are on more than one network: each primary then
// exposes its services through an east-west gateway.
func (f *Fleet) MultiNetwork() bool {
	for _, c := range f.Clusters {
		if c.Network != f.Clusters[0].Network {
			return true
		}
	}
	return false
}

// EastWest is the east-west gateway install cluster c gets, as upstream's guides make it
// (gen-eastwest-gateway.sh, then expose-istiod.yaml and expose-services.yaml), by this
// istioctl's eastwest profile: on a primary that serves a remote with no
// remotePilotAddress (the remote reaches its istiod through it: exposeIstiod), and on every
// primary of a multi-network fleet (exposeServices). ok is false when c gets none.
// revision is the revision of c's control plane.
func (f *Fleet) EastWest(c *Cluster, revision string) (opts spec.Options, ok bool) {
	exposes := f.Exposes(c)
	if len(exposes) == 0 {
		return spec.Options{}, false
	}
	east := map[string]any{}
	for _, k := range exposes {
		east[k] = true
	}
	sp := map[string]any{"profile": "eastwest", "eastWest": east,
		"values": map[string]any{"global": map[string]any{"meshID": f.MeshID, "network": c.Network, "multiCluster": map[string]any{"clusterName": c.Name}}}}
	if revision != "" && revision != "default" {
		sp["revision"] = revision
	}
	lines := v1alpha1.Lines{"spec.profile": c.Line, "spec.eastWest": c.Line, "spec.values.global.network": c.Line}
	return spec.Options{Docs: []spec.Doc{{Source: f.Source, Tree: map[string]any{"apiVersion": v1alpha1.APIVersion, "kind": v1alpha1.KindName, "spec": sp}, Lines: lines}}}, true
}

// Exposes are the eastWest settings of c's east-west gateway (exposeIstiod, exposeServices),
// none when c gets no gateway: see EastWest.
func (f *Fleet) Exposes(c *Cluster) []string {
	if !c.Role.ControlPlane() {
		return nil
	}
	var out []string
	for _, o := range f.Served(c) {
		if o.RemotePilotAddress == "" {
			out = append(out, "exposeIstiod")
			break
		}
	}
	if f.MultiNetwork() && c.Role == RolePrimary {
		out = append(out, "exposeServices")
	}
	return out
}

// WithAddress is cluster c's spec with the address its proxies reach its primary's istiod
// at (values.global.remotePilotAddress, and so the namespace annotation): what the install
// fills in from the primary's east-west gateway when the file gives none.
func (f *Fleet) WithAddress(c *Cluster, address string) spec.Options {
	cc := *c
	cc.RemotePilotAddress = address
	return f.Spec(&cc)
}
