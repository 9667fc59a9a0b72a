package spec_test

import "testing"

// Free-form values (upstream's google.protobuf.Struct fields, the ztunnel chart's values,
// gatewayClasses, unvalidatedValues) given a shape the charts cannot read are spec errors
// naming the path (and file:line), never a template error from the chart: an object stays
// an object, a list a list, a single value a single value.
func TestFreeFormValueShapes(t *testing.T) {
	resolveCases(t, "values-shapes.txt", []specCase{
		one("pilot.env as a list (the issue's example)", header, "values.pilot.env[0]=x"),
		one("pilot.env as a single value", header, "values.pilot.env=x"),
		valuesCase("pilot.env as a list, in a file", "pilot:\n  env:\n  - name: PILOT_X\n    value: \"1\""),
		one("cni.env as a list", header, "values.cni.env[0]=x"),
		one("gateways.istio-ingressgateway.env as a list", header, "values.gateways.istio-ingressgateway.env[0]=x"),
		valuesCase("pilot.podLabels as a list", "pilot:\n  podLabels: [app]"),
		valuesCase("pilot.deploymentLabels as a single value", "pilot:\n  deploymentLabels: team=mesh"),
		valuesCase("pilot.podAnnotations as a list", "pilot:\n  podAnnotations: [a]"),
		valuesCase("cni.daemonSetLabels as a list", "cni:\n  daemonSetLabels: [a]"),
		one("gateways.istio-egressgateway.serviceAnnotations as a list", header, "values.gateways.istio-egressgateway.serviceAnnotations[0]=x"),
		valuesCase("gateways.istio-ingressgateway.serviceAccount.annotations as a list", "gateways:\n  istio-ingressgateway:\n    serviceAccount:\n      annotations: [a]"),
		valuesCase("global.meshNetworks as a list", "global:\n  meshNetworks: [network1]"),
		one("sidecarInjectorWebhook.templates as a list", header, "values.sidecarInjectorWebhook.templates[0]=x"),
		valuesCase("sidecarInjectorWebhook.injectedAnnotations as a single value", "sidecarInjectorWebhook:\n  injectedAnnotations: x"),
		valuesCase("gateways.istio-ingressgateway.configVolumes items must be objects", "gateways:\n  istio-ingressgateway:\n    configVolumes: [cm]"),
		valuesCase("gateways.istio-ingressgateway.podAntiAffinityLabelSelector items must be objects", "gateways:\n  istio-ingressgateway:\n    podAntiAffinityLabelSelector: [security]"),
		one("gatewayClasses as a list", header, "values.gatewayClasses[0]=x"),
		one("gatewayClasses.<class> as a single value", header, "values.gatewayClasses.istio=x"),
		one("ztunnel.env as a list (the ztunnel chart's own values)", header, "values.ztunnel.env[0]=x"),
		valuesCase("ztunnel.podLabels as a list", "ztunnel:\n  podLabels: [a]"),
		one("ztunnel.hub as an object", header, "values.ztunnel.hub.registry=x"),
		valuesCase("ztunnel.resources as a list", "ztunnel:\n  resources: [cpu]"),
		one("ztunnel: a key its chart does not have stays free", header, "values.ztunnel.myKnob[0]=x"),
		one("meshConfig under values: type-checked as spec.meshConfig", header, "values.meshConfig.accessLogFile[0]=x"),
		one("unvalidatedValues: a shape the chart cannot read", header, "unvalidatedValues.pilot.env[0]=x"),
		specCase{name: "unvalidatedValues in a file", files: map[string]string{"u.yaml": header + "spec:\n  unvalidatedValues:\n    global:\n      proxy: enabled\n"}},
		one("unvalidatedValues: unknown names and other scalar types still pass", header, "unvalidatedValues.pilot.anything[0].x=1", "unvalidatedValues.pilot.autoscaleMin=many"),
		valuesCase("the right shapes pass", "pilot:\n  env: {PILOT_X: \"1\"}\n  podLabels: {team: mesh}\nztunnel:\n  env: {RUST_LOG: debug}\ngatewayClasses:\n  istio:\n    deployment: {spec: {replicas: 2}}"),
	}, nil)
}
