// Package revision says what runs, by control plane revision: each revision's version
// and components, the tags pointing at it, the namespaces that select it and the pods
// whose proxies it injected, with the proxies out of skew (operator/skew) marked. It reads
// the cluster and decides nothing; precheck and the upgrades build on its list. ControlPlanes is the
// control-plane discovery (the istiod Deployments of a cluster) every command uses.
//
// How a version is read: an object istioctl applied carries the version label
// (operator.istio.io/version) of the istioctl that applied it, which installs its own
// version; without the label, the tag of the image of its main container (istiod's
// discovery, a node agent's); a proxy's version is its istio-proxy image's tag (the
// injector renders the revision's values.global.tag there). istiod's own report (its
// version endpoint) is not read: that would dial a pod.
package revision
