package admission

import (
	"fmt"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	psapi "k8s.io/pod-security-admission/api"
	"k8s.io/pod-security-admission/policy"

	"github.com/istioctl-installer/istioctl/operator/readiness"
)

// templatePath is where each workload kind keeps its pod template.
var templatePath = map[string][]string{
	"Deployment.apps":  {"spec", "template"},
	"DaemonSet.apps":   {"spec", "template"},
	"StatefulSet.apps": {"spec", "template"},
	"ReplicaSet.apps":  {"spec", "template"},
	"Job.batch":        {"spec", "template"},
	"CronJob.batch":    {"spec", "jobTemplate", "spec", "template"},
}

// PodFor is a pod as w's controller would create it from its template (labels,
// annotations and spec; a generated name), nil when w is not a workload.
func PodFor(w *unstructured.Unstructured) *unstructured.Unstructured {
	path, ok := templatePath[w.GroupVersionKind().GroupKind().String()]
	if !ok {
		return nil
	}
	tmpl, found, _ := unstructured.NestedMap(w.Object, path...)
	if !found {
		return nil
	}
	spec, _ := tmpl["spec"].(map[string]any)
	pod := &unstructured.Unstructured{Object: map[string]any{"spec": spec}}
	pod.SetAPIVersion("v1")
	pod.SetKind("Pod")
	pod.SetNamespace(w.GetNamespace())
	pod.SetGenerateName(w.GetName() + "-")
	if md, ok := tmpl["metadata"].(map[string]any); ok {
		if l, ok := md["labels"].(map[string]any); ok {
			pod.Object["metadata"].(map[string]any)["labels"] = l
		}
		if a, ok := md["annotations"].(map[string]any); ok {
			pod.Object["metadata"].(map[string]any)["annotations"] = a
		}
	}
	return pod
}

// evaluator runs the Pod Security checks of the pod-security-admission library, the code
// the apiserver's PodSecurity admission runs.
var evaluator, evaluatorErr = policy.NewEvaluator(policy.DefaultChecks(), nil)

// PodSecurity judges pod at the enforce level and version nsLabels set
// (pod-security.kubernetes.io/enforce, -version), as the apiserver would in a namespace
// with those labels: nil when admitted or when the labels set no level (the cluster's
// default level applies, which the API does not show).
func PodSecurity(pod *unstructured.Unstructured, nsLabels map[string]string) (*readiness.Refusal, error) {
	lvl, ok := nsLabels[psapi.EnforceLevelLabel]
	if !ok {
		return nil, nil
	}
	level, err := psapi.ParseLevel(lvl)
	if err != nil {
		return nil, fmt.Errorf("namespace label %s=%q: %w", psapi.EnforceLevelLabel, lvl, err)
	}
	version := psapi.LatestVersion()
	if v, ok := nsLabels[psapi.EnforceVersionLabel]; ok {
		if version, err = psapi.ParseVersion(v); err != nil {
			return nil, fmt.Errorf("namespace label %s=%q: %w", psapi.EnforceVersionLabel, v, err)
		}
	}
	if evaluatorErr != nil {
		return nil, evaluatorErr
	}
	var p corev1.Pod
	if err := runtime.DefaultUnstructuredConverter.FromUnstructured(pod.Object, &p); err != nil {
		return nil, fmt.Errorf("reading the pod of %s: %w", pod.GetGenerateName(), err)
	}
	res := policy.AggregateCheckResults(evaluator.EvaluatePod(psapi.LevelVersion{Level: level, Version: version}, &p.ObjectMeta, &p.Spec))
	if res.Allowed {
		return nil, nil
	}
	// The apiserver's words, so that a refusal reads the same however it was found.
	lv := psapi.LevelVersion{Level: level, Version: version}
	msg := fmt.Sprintf(`pods %q is forbidden: violates PodSecurity %q: %s`, p.GenerateName, lv.String(), res.ForbiddenDetail())
	r := readiness.Classify(msg, false)
	return &r, nil
}
