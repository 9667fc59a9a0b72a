package spec_test

import (
	"strings"
	"testing"
)

// valuesCase is a spec file setting spec.values to the YAML in values (indented below it).
func valuesCase(name, values string, sets ...string) specCase {
	body := header + "spec:\n  values:\n"
	for _, l := range strings.Split(strings.TrimSpace(values), "\n") {
		body += "    " + l + "\n"
	}
	return one(name, body, sets...)
}

// Every values field that holds a Kubernetes object is checked against its Kubernetes type,
// field by field, as upstream checks it: an unknown field is an error naming the path and
// file:line (with a suggestion), and so is a wrong type. The fields are the go= lines of
// operator/api/v1alpha1/testdata/values_fields.txt; a case per field.
func TestKubernetesTypedValues(t *testing.T) {
	resolveCases(t, "values-k8s.txt", []specCase{
		valuesCase("global.defaultTolerations (the issue's example)", "global:\n  defaultTolerations:\n  - keyy: dedicated\n    operator: Exists"),
		valuesCase("global.defaultTolerations, a wrong type", "global:\n  defaultTolerations:\n  - key: k\n    tolerationSeconds: soon"),
		valuesCase("cni.affinity", "cni:\n  affinity:\n    nodeAffinity:\n      requiredDuringSchedulingIgnoredDuringExecution:\n        nodeSelectorTerm: []"),
		valuesCase("cni.seccompProfile", "cni:\n  seccompProfile:\n    type: Localhost\n    localhostProfil: my.json"),
		valuesCase("gateways.istio-egressgateway.tolerations", "gateways:\n  istio-egressgateway:\n    tolerations:\n    - key: a\n      effects: NoSchedule"),
		valuesCase("gateways.istio-egressgateway.additionalContainers", "gateways:\n  istio-egressgateway:\n    additionalContainers:\n    - name: log\n      imagee: busybox"),
		valuesCase("gateways.istio-ingressgateway.tolerations", "gateways:\n  istio-ingressgateway:\n    tolerations:\n    - key: a\n      operater: Exists"),
		valuesCase("gateways.istio-ingressgateway.additionalContainers", "gateways:\n  istio-ingressgateway:\n    additionalContainers:\n    - name: log\n      image: busybox\n      ports:\n      - port: 80"),
		valuesCase("gateways.securityContext (a pod security context)", "gateways:\n  securityContext:\n    runAsUser: 1337\n    fsGroupp: 1337"),
		valuesCase("gateways.seccompProfile", "gateways:\n  seccompProfile:\n    tipe: RuntimeDefault"),
		valuesCase("pilot.autoscaleBehavior (an HPA behavior)", "pilot:\n  autoscaleBehavior:\n    scaleUp:\n      policies:\n      - type: Pods\n        value: 1\n        period: 60"),
		valuesCase("pilot.nodeSelector (a pod nodeSelector)", "pilot:\n  nodeSelector:\n    disktype: [ssd]"),
		valuesCase("pilot.nodeSelector, a number that the apiserver would refuse", "pilot:\n  nodeSelector:\n    pool: 1"),
		valuesCase("pilot.affinity", "pilot:\n  affinity:\n    podAntiAffinity:\n      preferred: []"),
		valuesCase("pilot.tolerations", "pilot:\n  tolerations:\n  - key: a\n    effect: NoSchedule\n    seconds: 3"),
		valuesCase("pilot.seccompProfile", "pilot:\n  seccompProfile:\n    type: Localhost\n    profile: x"),
		valuesCase("pilot.topologySpreadConstraints", "pilot:\n  topologySpreadConstraints:\n  - maxSkew: 1\n    topologyKey: topology.kubernetes.io/zone\n    whenUnsatisfiable: DoNotSchedule\n    labelSelectors: {}"),
		valuesCase("pilot.extraContainerArgs (container args: strings)", "pilot:\n  extraContainerArgs:\n  - --log_as_json\n  - {flag: x}"),
		valuesCase("pilot.volumeMounts", "pilot:\n  volumeMounts:\n  - name: extra\n    mountpath: /etc/extra"),
		valuesCase("pilot.volumes", "pilot:\n  volumes:\n  - name: extra\n    secret:\n      secretNam: extra"),
		valuesCase("pilot.envVarFrom (env entries)", "pilot:\n  envVarFrom:\n  - name: TOKEN\n    valueFrom:\n      secretKeyRef:\n        name: s\n        keys: token"),
		valuesCase("global.proxy.seccompProfile", "global:\n  proxy:\n    seccompProfile:\n      typ: RuntimeDefault"),
		valuesCase("global.proxy.lifecycle", "global:\n  proxy:\n    lifecycle:\n      preStop:\n        exec:\n          command: sleep 5"),
		valuesCase("sidecarInjectorWebhook.neverInjectSelector (label selectors)", "sidecarInjectorWebhook:\n  neverInjectSelector:\n  - matchLabel:\n      app: batch"),
		valuesCase("sidecarInjectorWebhook.alwaysInjectSelector", "sidecarInjectorWebhook:\n  alwaysInjectSelector:\n  - matchExpressions:\n    - key: app\n      operator: In\n      value: [web]"),
		valuesCase("global.waypoint.affinity", "global:\n  waypoint:\n    affinity:\n      nodeAffinity:\n        preferredDuringScheduling: []"),
		valuesCase("global.waypoint.topologySpreadConstraints", "global:\n  waypoint:\n    topologySpreadConstraints:\n    - maxSkew: one"),
		valuesCase("global.waypoint.nodeSelector (a pod nodeSelector, as the chart writes it)", "global:\n  waypoint:\n    nodeSelector:\n      nodeSelectorTerms: []"),
		valuesCase("global.waypoint.toleration", "global:\n  waypoint:\n    toleration:\n    - effect: NoSchedule\n      tolerationSecond: 5"),
		one("through --set, the same check", header, "values.global.defaultTolerations[0].keyy=dedicated"),
		valuesCase("valid Kubernetes objects pass (deprecated fields warn)", `
global:
  defaultTolerations:
  - {key: dedicated, operator: Exists, effect: NoSchedule}
  waypoint:
    nodeSelector: {kubernetes.io/os: linux}
    toleration: [{operator: Exists}]
pilot:
  nodeSelector: {disktype: ssd}
  affinity:
    nodeAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        nodeSelectorTerms: [{matchExpressions: [{key: disktype, operator: In, values: [ssd]}]}]
  topologySpreadConstraints: [{maxSkew: 1, topologyKey: topology.kubernetes.io/zone, whenUnsatisfiable: ScheduleAnyway}]
  volumes: [{name: extra, secret: {secretName: extra}}]
  volumeMounts: [{name: extra, mountPath: /etc/extra}]
  envVarFrom: [{name: TOKEN, valueFrom: {secretKeyRef: {name: s, key: token}}}]
  extraContainerArgs: [--log_as_json]
  autoscaleBehavior: {scaleUp: {stabilizationWindowSeconds: 60}}
  seccompProfile: {type: RuntimeDefault}
gateways:
  securityContext: {runAsNonRoot: true}
  istio-ingressgateway:
    additionalContainers: [{name: log, image: busybox}]
sidecarInjectorWebhook:
  neverInjectSelector: [{matchLabels: {app: batch}}]`),
	}, nil)
}
