package skew

// Release is what a minor release of Istio requires of the cluster.
type Release struct {
	// Minor is "1.30".
	Minor string
	// KubernetesMin and KubernetesMax bound the supported Kubernetes minors (announcement).
	KubernetesMin, KubernetesMax string
	// GatewayAPIMin is the oldest Gateway API bundle-version it works with ("" when the
	// release states none beyond the served versions precheck's gateway-api-versions checks).
	GatewayAPIMin string
}

// MinKubernetes is the oldest Kubernetes istioctl installs into, as upstream istioctl's
// MinK8SVersion (raised to 1.32 by istio/istio#60111): precheck's kubernetes-version check
// refuses an older cluster, and charts rendered without a cluster see this version
// (render.DefaultKubeVersion). The one place it is spelled.
const MinKubernetes = "1.32.0"

// Releases are the releases the rules know, oldest first. Source: each release's
// announcement on istio.io (the Kubernetes window), istio/istio#60111 (1.30's minimum
// Kubernetes 1.32), istio/istio#60357 (1.30's Gateway API v1.5).
var Releases = []Release{
	{Minor: "1.26", KubernetesMin: "1.29", KubernetesMax: "1.32"},
	{Minor: "1.27", KubernetesMin: "1.29", KubernetesMax: "1.33"},
	{Minor: "1.28", KubernetesMin: "1.29", KubernetesMax: "1.35"},
	// The announcement says 1.31; istioctl's own minimum (MinK8SVersion) says 1.30.
	{Minor: "1.29", KubernetesMin: "1.31", KubernetesMax: "1.35"},
	{Minor: "1.30", KubernetesMin: "1.32", KubernetesMax: "1.36", GatewayAPIMin: "1.5.0"},
	{Minor: "1.31", KubernetesMin: "1.32", KubernetesMax: "1.36", GatewayAPIMin: "1.5.0"},
}

// ReleaseOf returns the release of version v (any patch), ok false when the rules do not
// know it.
func ReleaseOf(v string) (Release, bool) {
	m, err := parse(v)
	if err != nil {
		return Release{}, false
	}
	for _, r := range Releases {
		if rm, _ := parse(r.Minor); rm.Major() == m.Major() && rm.Minor() == m.Minor() {
			return r, true
		}
	}
	return Release{}, false
}
