package action_test

// injCase is one pod a user might deploy, as the injection fidelity test creates it
// (a server-side dry run, so istiod's webhook answers and nothing is stored): what users
// set on a pod or its namespace that the injection templates read.
type injCase struct {
	name string
	// ns is the namespace it goes to: "on" (istio-injection=enabled: the default revision),
	// "rev" (istio.io/rev=canary: the canary revision, installed with non-default values)
	// or "off" (no injection label).
	ns string
	// pod is the Pod's YAML without apiVersion, kind, name and namespace.
	pod string
}

// A container every case starts from.
const injAppContainer = `
  - name: app
    image: registry.example/app:1
    ports:
    - {containerPort: 8080, name: http}`

// injCases cover what users set: proxy resources, holdApplicationUntilProxyStarts,
// native sidecars on and off, excluded ports and ranges, a custom proxy image, probe
// rewriting, the gateway and grpc templates, sidecar.istio.io/inject=false, revision labels,
// and the install values of the canary revision (injValues).
var injCases = []injCase{
	{"plain", "on", `
metadata:
  labels: {app: web, version: v1}
spec:
  containers:` + injAppContainer},
	{"two-containers", "on", `
metadata:
  labels: {app: multi}
spec:
  containers:` + injAppContainer + `
  - name: sidecar-app
    image: registry.example/helper:2
    ports:
    - {containerPort: 9090, name: grpc-api}
    - {containerPort: 9091, protocol: UDP}`},
	{"no-ports", "on", `
spec:
  containers:
  - {name: app, image: registry.example/app:1}`},
	{"default-container-set", "on", `
metadata:
  annotations: {kubectl.kubernetes.io/default-container: helper, kubectl.kubernetes.io/default-logs-container: helper}
spec:
  containers:` + injAppContainer + `
  - {name: helper, image: registry.example/helper:2}`},
	{"probes-http", "on", `
spec:
  containers:
  - name: app
    image: registry.example/app:1
    ports:
    - {containerPort: 8080, name: http}
    readinessProbe: {httpGet: {path: /ready, port: 8080}, initialDelaySeconds: 3}
    livenessProbe: {httpGet: {path: /live, port: http, httpHeaders: [{name: X-Probe, value: "1"}]}, periodSeconds: 7}
    startupProbe: {httpGet: {path: /started, port: 8080, scheme: HTTPS}, failureThreshold: 30}`},
	{"probes-tcp-grpc", "on", `
spec:
  containers:
  - name: app
    image: registry.example/app:1
    ports:
    - {containerPort: 8080, name: http}
    - {containerPort: 9000, name: grpc}
    readinessProbe: {tcpSocket: {port: 8080}}
    livenessProbe: {grpc: {port: 9000, service: health}}`},
	{"probes-not-rewritten", "on", `
metadata:
  annotations: {sidecar.istio.io/rewriteAppHTTPProbers: "false"}
spec:
  containers:
  - name: app
    image: registry.example/app:1
    readinessProbe: {httpGet: {path: /ready, port: 8080}}`},
	{"probes-exec", "on", `
spec:
  containers:
  - name: app
    image: registry.example/app:1
    readinessProbe: {exec: {command: [cat, /tmp/ready]}}`},
	{"proxy-resources", "on", `
metadata:
  annotations:
    sidecar.istio.io/proxyCPU: 200m
    sidecar.istio.io/proxyMemory: 256Mi
    sidecar.istio.io/proxyCPULimit: "2"
    sidecar.istio.io/proxyMemoryLimit: 1Gi
spec:
  containers:` + injAppContainer},
	{"proxy-requests-only", "on", `
metadata:
  annotations: {sidecar.istio.io/proxyMemory: 100Mi}
spec:
  containers:` + injAppContainer},
	{"proxy-limits-only", "on", `
metadata:
  annotations: {sidecar.istio.io/proxyCPULimit: 500m}
spec:
  containers:` + injAppContainer},
	{"hold-application", "on", `
metadata:
  annotations:
    proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
    sidecar.istio.io/nativeSidecar: "false"
spec:
  containers:` + injAppContainer},
	{"native-sidecar-on", "on", `
metadata:
  annotations: {sidecar.istio.io/nativeSidecar: "true"}
spec:
  initContainers:
  - {name: migrate, image: registry.example/migrate:1}
  containers:` + injAppContainer + `
    readinessProbe: {httpGet: {path: /ready, port: 8080}}`},
	{"native-sidecar-off", "on", `
metadata:
  annotations: {sidecar.istio.io/nativeSidecar: "false"}
spec:
  initContainers:
  - {name: migrate, image: registry.example/migrate:1}
  containers:` + injAppContainer},
	{"native-sidecar-hold", "on", `
metadata:
  annotations:
    sidecar.istio.io/nativeSidecar: "true"
    proxy.istio.io/config: '{"holdApplicationUntilProxyStarts": true}'
spec:
  containers:` + injAppContainer},
	{"excluded-ports-and-ranges", "on", `
metadata:
  annotations:
    traffic.sidecar.istio.io/excludeOutboundPorts: "5432,6379"
    traffic.sidecar.istio.io/excludeInboundPorts: "9100"
    traffic.sidecar.istio.io/excludeOutboundIPRanges: "10.96.0.1/32,169.254.169.254/32"
    traffic.sidecar.istio.io/includeOutboundIPRanges: "10.0.0.0/8"
spec:
  containers:` + injAppContainer},
	{"included-ports-wildcard", "on", `
metadata:
  annotations:
    traffic.sidecar.istio.io/includeInboundPorts: "*"
    traffic.sidecar.istio.io/includeOutboundIPRanges: "*"
    traffic.sidecar.istio.io/includeOutboundPorts: "8443"
spec:
  containers:` + injAppContainer},
	{"included-ports-empty", "on", `
metadata:
  annotations:
    traffic.sidecar.istio.io/includeInboundPorts: ""
    traffic.sidecar.istio.io/includeOutboundIPRanges: ""
spec:
  containers:` + injAppContainer},
	{"interfaces", "on", `
metadata:
  annotations:
    traffic.sidecar.istio.io/kubevirtInterfaces: "net1,net2"
    istio.io/reroute-virtual-interfaces: "net3"
    traffic.sidecar.istio.io/excludeInterfaces: "eth1"
spec:
  containers:` + injAppContainer},
	{"custom-proxy-image", "on", `
metadata:
  annotations: {sidecar.istio.io/proxyImage: "registry.example/proxyv2:custom"}
spec:
  containers:` + injAppContainer},
	{"interception-tproxy", "on", `
metadata:
  annotations: {sidecar.istio.io/interceptionMode: TPROXY}
spec:
  containers:` + injAppContainer},
	{"interception-none", "on", `
metadata:
  annotations: {sidecar.istio.io/interceptionMode: NONE}
spec:
  containers:` + injAppContainer},
	{"inject-false", "on", `
metadata:
  labels: {sidecar.istio.io/inject: "false"}
spec:
  containers:` + injAppContainer},
	{"host-network", "on", `
spec:
  hostNetwork: true
  containers:` + injAppContainer},
	{"status-port-and-readiness", "on", `
metadata:
  annotations:
    status.sidecar.istio.io/port: "15030"
    readiness.status.sidecar.istio.io/initialDelaySeconds: "5"
    readiness.status.sidecar.istio.io/periodSeconds: "3"
    readiness.status.sidecar.istio.io/failureThreshold: "10"
spec:
  containers:` + injAppContainer},
	{"log-levels", "on", `
metadata:
  annotations:
    sidecar.istio.io/logLevel: debug
    sidecar.istio.io/componentLogLevel: "misc:error,upstream:debug"
    sidecar.istio.io/agentLogLevel: "default:debug"
spec:
  containers:` + injAppContainer},
	{"user-volumes", "on", `
metadata:
  annotations:
    sidecar.istio.io/userVolume: '[{"name":"certs","secret":{"secretName":"my-certs"}}]'
    sidecar.istio.io/userVolumeMount: '[{"name":"certs","mountPath":"/etc/my-certs","readOnly":true}]'
spec:
  containers:` + injAppContainer},
	{"core-dump-and-bind", "on", `
metadata:
  annotations:
    sidecar.istio.io/enableCoreDump: "true"
    sidecar.istio.io/capNetBindService: "true"
spec:
  containers:` + injAppContainer},
	{"proxy-container-override", "on", `
spec:
  containers:` + injAppContainer + `
  - name: istio-proxy
    image: auto
    resources:
      requests: {cpu: 30m, memory: 40Mi}
    env:
    - {name: EXTRA, value: "1"}
    securityContext: {runAsUser: 1234}`},
	{"security-context", "on", `
spec:
  securityContext: {runAsUser: 1000, runAsGroup: 3000, fsGroup: 2000}
  containers:` + injAppContainer + `
    securityContext: {allowPrivilegeEscalation: false, readOnlyRootFilesystem: true}`},
	{"proxy-config-annotation", "on", `
metadata:
  annotations:
    proxy.istio.io/config: |
      concurrency: 4
      terminationDrainDuration: 20s
      proxyMetadata:
        ISTIO_META_DNS_CAPTURE: "true"
      tracing:
        sampling: 10
spec:
  containers:` + injAppContainer},
	{"prometheus-annotations", "on", `
metadata:
  annotations:
    prometheus.io/scrape: "true"
    prometheus.io/port: "9090"
    prometheus.io/path: /metrics
spec:
  containers:` + injAppContainer},
	{"metrics-merge-off", "on", `
metadata:
  annotations: {prometheus.istio.io/merge-metrics: "false"}
spec:
  containers:` + injAppContainer},
	{"canonical-labels", "on", `
metadata:
  labels:
    service.istio.io/canonical-name: shop
    service.istio.io/canonical-revision: "2024"
    app.kubernetes.io/name: ignored
spec:
  containers:` + injAppContainer},
	{"long-app-name", "on", `
metadata:
  labels: {app: a-very-long-application-name-that-takes-all-sixty-three-chars-x, version: a-long-version-name-that-takes-all-of-the-sixty-three-character}
spec:
  containers:` + injAppContainer},
	{"owned-by-replicaset", "on", `
metadata:
  generateName: shop-5d8f9c7b6-
  labels: {app: shop, pod-template-hash: 5d8f9c7b6}
  ownerReferences:
  - {apiVersion: apps/v1, kind: ReplicaSet, name: shop-5d8f9c7b6, uid: 9a0c1f44-7a41-4d2e-9f39-1b2c3d4e5f60, controller: true}
spec:
  containers:` + injAppContainer},
	{"job-pod", "on", `
metadata:
  labels: {job-name: nightly}
spec:
  restartPolicy: Never
  containers:` + injAppContainer},
	{"image-pull-secrets-and-sa", "on", `
spec:
  serviceAccountName: default
  imagePullSecrets: [{name: regcred}]
  containers:` + injAppContainer},
	{"gateway-template", "on", `
metadata:
  labels: {istio: ingressgateway, app: my-gateway}
  annotations: {inject.istio.io/templates: gateway}
spec:
  containers:
  - {name: istio-proxy, image: auto}`},
	{"grpc-agent-template", "on", `
metadata:
  labels: {app: grpc-svc}
  annotations: {inject.istio.io/templates: grpc-agent}
spec:
  containers:
  - name: app
    image: registry.example/grpc:1
    ports:
    - {containerPort: 7070, name: grpc}`},
	{"grpc-simple-template", "on", `
metadata:
  annotations: {inject.istio.io/templates: grpc-simple}
spec:
  containers:` + injAppContainer},
	{"bad-exclude-range", "on", `
metadata:
  annotations: {traffic.sidecar.istio.io/excludeOutboundIPRanges: "10.0.0.0/33"}
spec:
  containers:` + injAppContainer},
	{"opt-in-label", "off", `
metadata:
  labels: {sidecar.istio.io/inject: "true"}
spec:
  containers:` + injAppContainer},
	{"revision-label", "off", `
metadata:
  labels: {istio.io/rev: canary}
spec:
  containers:` + injAppContainer},
	{"no-injection-label", "off", `
spec:
  containers:` + injAppContainer},
	{"revision-defaults", "rev", `
metadata:
  labels: {app: web, version: v2}
spec:
  containers:` + injAppContainer + `
    readinessProbe: {httpGet: {path: /ready, port: 8080}}`},
	{"revision-native-off", "rev", `
metadata:
  annotations: {sidecar.istio.io/nativeSidecar: "false"}
spec:
  containers:` + injAppContainer},
	{"revision-annotations-over-values", "rev", `
metadata:
  annotations:
    sidecar.istio.io/proxyCPU: 10m
    traffic.sidecar.istio.io/excludeOutboundPorts: "25"
    traffic.sidecar.istio.io/includeOutboundIPRanges: "172.16.0.0/12"
    sidecar.istio.io/rewriteAppHTTPProbers: "true"
spec:
  containers:` + injAppContainer + `
    livenessProbe: {httpGet: {path: /live, port: 8080}}`},
	{"revision-gateway-template", "rev", `
metadata:
  labels: {istio: eastwestgateway}
  annotations: {inject.istio.io/templates: gateway}
spec:
  containers:
  - {name: istio-proxy, image: auto}`},
	{"revision-inject-false", "rev", `
metadata:
  labels: {sidecar.istio.io/inject: "false"}
spec:
  containers:` + injAppContainer},
}

// injValues are the canary revision's --set values: what users set at install time
// that reaches every pod it injects.
var injValues = []string{
	"values.global.proxy.resources.requests.cpu=50m",
	"values.global.proxy.resources.requests.memory=64Mi",
	"values.global.proxy.resources.limits.cpu=1",
	"values.global.proxy.resources.limits.memory=512Mi",
	"meshConfig.defaultConfig.holdApplicationUntilProxyStarts=true",
	"values.global.proxy.includeIPRanges=10.0.0.0/8",
	"values.global.proxy.excludeIPRanges=10.96.0.1/32",
	"values.global.proxy.excludeInboundPorts=9000",
	"values.global.proxy.excludeOutboundPorts=5432",
	"values.pilot.env.ENABLE_NATIVE_SIDECARS=true",
	"values.pilot.cni.enabled=true",
	"values.global.imagePullPolicy=IfNotPresent",
	"values.global.imagePullSecrets[0]=regcred",
	"values.global.logging.level=default:debug",
	"values.global.proxy.logLevel=debug",
	"values.global.proxy.privileged=true",
	"values.sidecarInjectorWebhook.rewriteAppHTTPProbe=false",
	"meshConfig.defaultConfig.proxyMetadata.ISTIO_META_DNS_CAPTURE=true",
	"meshConfig.defaultConfig.concurrency=2",
}
