package spec_test

import "testing"

// Every image reference an install would write is valid: each hub, tag, image and variant
// (spec, components, values, unvalidatedValues, the ztunnel chart's values) is checked
// where it is set, and an invalid one is an error naming that field. Upstream checks only
// spec.hub and spec.tag, and renders "/pilot:latest" for --set values.global.hub=.
func TestImageReferences(t *testing.T) {
	resolveCases(t, "images.txt", []specCase{
		one("an empty global hub (the issue's example)", header, "values.global.hub="),
		one("an empty spec.hub", header, "hub="),
		one("an empty spec.tag", header, "tag="),
		one("an empty global tag", header, "values.global.tag="),
		valuesCase("an empty global hub, in a file", "global:\n  hub: \"\""),
		one("an empty ztunnel hub (its chart takes it as it is)", header, "profile=ambient", "values.ztunnel.hub="),
		one("an empty ztunnel tag", header, "profile=ambient", "values.ztunnel.tag="),
		one("a global hub with capitals in the path", header, "values.global.hub=docker.io/MyOrg"),
		one("a pilot hub with a space", header, "values.pilot.hub=registry.example.com/my mesh"),
		one("a component hub", header, "components.cni.enabled=true", "components.cni.hub=Registry/Mesh"),
		one("a gateway tag", header, "components.ingressGateways[0].tag=-rc1"),
		one("a pilot tag", header, "values.pilot.tag=1.30.0+build"),
		one("a CNI repair tag", header, "values.cni.repair.tag=.x"),
		one("a pilot image name with a tag in it", header, "values.pilot.image=pilot:1.2"),
		one("a pilot image name with capitals", header, "values.pilot.image=Pilot"),
		one("a whole pilot image reference that does not parse", header, "values.pilot.image=docker.io/istio/pilot::1"),
		one("the proxy image", header, "values.global.proxy.image=proxy v2"),
		one("the proxy init image", header, "values.global.proxy_init.image=docker.io/Istio/proxyv2"),
		one("the agentgateway image", header, "values.global.agentgateway.image=agent gateway"),
		one("a variant", header, "values.global.variant=distro less"),
		one("the ztunnel image", header, "profile=ambient", "values.ztunnel.image=ZTUNNEL"),
		one("an empty hub in unvalidatedValues", header, "unvalidatedValues.global.hub="),
		one("several at once", header, "values.global.hub=", "values.global.tag=", "values.pilot.variant=-"),
		one("empty component-level parts fall back to the global ones: fine", header, "values.pilot.hub=", "values.pilot.tag=", "values.pilot.image=", "values.global.proxy.image=", "values.global.variant=", "components.pilot.hub="),
		one("whole references and registries with ports: fine", header, "values.pilot.image=registry.example.com:5000/mesh/pilot:1.30.0@sha256:0123456789012345678901234567890123456789012345678901234567890123", "hub=registry.example.com:5000/mesh", "tag=1.30.0_custom-1"),
	}, nil)
}
