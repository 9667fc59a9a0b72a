package ownership

// The names of links between clusters, as upstream's create-remote-secret writes them and
// istiod reads them (pkg/kube/multicluster): a Secret in the istio namespace labelled
// LabelMultiCluster=true, each data key a cluster ID and its value a kubeconfig for that
// cluster's apiserver.
const (
	LabelMultiCluster = "istio/multiCluster"
	// AnnotationCluster names the cluster whose credentials the Secret holds.
	AnnotationCluster = "networking.istio.io/cluster"
	// RemoteSecretPrefix + cluster ID is the Secret of --type remote; its data key is the ID.
	RemoteSecretPrefix = "istio-remote-secret-"
	// ConfigSecretName and ConfigSecretKey are the Secret of --type config: the kubeconfig
	// of the config cluster an external istiod reads as its own.
	ConfigSecretName = "istio-kubeconfig"
	ConfigSecretKey  = "config"
	// ReaderServiceAccount is the identity --type remote gives other clusters' istiods (the
	// base chart renders it, the istiod chart its ClusterRole istio-reader-clusterrole-<ns>);
	// ConfigServiceAccount is --type config's.
	ReaderServiceAccount = "istio-reader-service-account"
	ConfigServiceAccount = "istiod"
	// ReaderClusterRolePrefix starts the names of the reader's ClusterRole and binding.
	ReaderClusterRolePrefix = "istio-reader-clusterrole"
	// TokenSecretSuffix follows the ServiceAccount's name in the long-lived token Secret
	// upstream creates when none exists (Kubernetes 1.24+ creates none itself).
	TokenSecretSuffix = "-istio-remote-secret-token"
	// LabelTokenFor marks a token Secret create-remote-secret --apply-to made for one
	// target cluster (the value: that cluster's ID, its kube-system UID): no other link uses
	// it, so the next run may delete it once its successor works.
	LabelTokenFor = "install.istio.io/remote-secret-for"
	// LinkFieldManager writes the link Secrets --apply-to applies.
	LinkFieldManager = "istioctl-remote-secret"
)

// RemoteSecretName is the Secret of a --type remote link to the cluster with that ID.
func RemoteSecretName(clusterID string) string { return RemoteSecretPrefix + clusterID }

// TokenSecretName is upstream's token Secret of a ServiceAccount.
func TokenSecretName(serviceAccount string) string { return serviceAccount + TokenSecretSuffix }

// The fleet's ownership labels (this project's own, not upstream's) on the link Secrets a
// fleet file makes: the mesh and the fleet they belong to, so a later install of the fleet
// finds, and prunes, its own links and leaves the ones made by hand alone.
const (
	LabelFleetMesh = "fleet.istioctl-installer.github.io/mesh-id"
	LabelFleetName = "fleet.istioctl-installer.github.io/name"
)

// AnnotationFleetFrom, on a link Secret a fleet made, is the kubeconfig context of the
// cluster whose credentials it holds: a later install of a file that no longer names that
// cluster still reaches it, to remove the links in it and the tokens it issued.
const AnnotationFleetFrom = "fleet.istioctl-installer.github.io/from-context"

// AnnotationFleetFromUID, beside AnnotationFleetFrom, is the identity of that cluster: its
// kube-system namespace's UID (link.ClusterUID). A context name is one kubeconfig's word
// for a cluster (another operator's, a renamed one, or two for one cluster say otherwise);
// the UID is the cluster's own. A run takes a cluster for one the file dropped only when
// the recorded context reaches a cluster of this UID, and no cluster of the file has it.
const AnnotationFleetFromUID = "fleet.istioctl-installer.github.io/from-cluster-uid"

// FleetSelector selects the link Secrets of the fleet of that name.
func FleetSelector(name string) string { return LabelFleetName + "=" + name }

// FleetLabels are the labels of a link Secret fleet name makes for mesh meshID.
func FleetLabels(meshID, name string) map[string]string {
	return map[string]string{LabelFleetMesh: meshID, LabelFleetName: name}
}

// The upstream names a multi-cluster install puts on the istio namespace of a cluster
// (istio.io's multi-cluster guides): its network, and on a remote the clusters whose
// istiod may act as its control plane.
const (
	LabelNetwork                   = "topology.istio.io/network"
	AnnotationControlPlaneClusters = "topology.istio.io/controlPlaneClusters"
)
