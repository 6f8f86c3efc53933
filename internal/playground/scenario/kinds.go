/*
Copyright The adminsched scheduler-plugins Authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package scenario

import (
	"maps"
	"slices"

	appsv1 "k8s.io/api/apps/v1"
	batchv1 "k8s.io/api/batch/v1"
	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/utils/ptr"
)

// object is a typed Kubernetes object.
type object interface {
	runtime.Object
	metav1.Object
}

// kindRule is what the playground knows of a kind beyond what the API server
// checks when it is applied: the kinds whose pods the scheduler places, so
// that a scenario that asks for an unknown scheduler, a missing node or
// 10^6 replicas is refused before a cluster starts, and a Service, which
// needs a port. Every other kind is applied as written.
type kindRule struct {
	apiVersion string
	// namespaced: the scenario gives the object workload.DefaultNamespace
	// when it names none. (For the kinds not in the table the apply step
	// knows, from the cluster's discovery.)
	namespaced bool
	new        func() object
	// podSpec is the spec of the pods it makes, nil for a kind without.
	podSpec func(object) *corev1.PodSpec
	// template is its pod template, which gets app=<name> and a selector
	// when it has neither; nil for a Pod.
	template func(object) (*corev1.PodTemplateSpec, **metav1.LabelSelector)
	// pods is how many pods it makes on nodes nodes, counted for MaxPods;
	// nil for none.
	pods func(o object, nodes int) int
	// check adds the kind's own checks of its fields.
	check func(o object, path *field.Path) field.ErrorList
	// defaults sets what the API server would otherwise refuse.
	defaults func(object)
}

// kinds is the kind table; supportedKinds lists it in the order errors do.
var (
	kinds = map[string]kindRule{
		"Pod": {apiVersion: "v1", namespaced: true, new: func() object { return &corev1.Pod{} },
			podSpec: func(o object) *corev1.PodSpec { return &o.(*corev1.Pod).Spec },
			pods:    func(object, int) int { return 1 }},
		"ReplicaSet": {apiVersion: "apps/v1", namespaced: true, new: func() object { return &appsv1.ReplicaSet{} },
			podSpec: func(o object) *corev1.PodSpec { return &o.(*appsv1.ReplicaSet).Spec.Template.Spec },
			template: func(o object) (*corev1.PodTemplateSpec, **metav1.LabelSelector) {
				rs := o.(*appsv1.ReplicaSet)
				return &rs.Spec.Template, &rs.Spec.Selector
			},
			pods: func(o object, _ int) int { return replicasInRange(o.(*appsv1.ReplicaSet).Spec.Replicas) },
			check: func(o object, p *field.Path) field.ErrorList {
				return validateReplicas(o.(*appsv1.ReplicaSet).Spec.Replicas, p.Child("spec", "replicas"))
			}},
		"Deployment": {apiVersion: "apps/v1", namespaced: true, new: func() object { return &appsv1.Deployment{} },
			podSpec: func(o object) *corev1.PodSpec { return &o.(*appsv1.Deployment).Spec.Template.Spec },
			template: func(o object) (*corev1.PodTemplateSpec, **metav1.LabelSelector) {
				d := o.(*appsv1.Deployment)
				return &d.Spec.Template, &d.Spec.Selector
			},
			pods: func(o object, _ int) int { return replicasInRange(o.(*appsv1.Deployment).Spec.Replicas) },
			check: func(o object, p *field.Path) field.ErrorList {
				return validateReplicas(o.(*appsv1.Deployment).Spec.Replicas, p.Child("spec", "replicas"))
			}},
		"StatefulSet": {apiVersion: "apps/v1", namespaced: true, new: func() object { return &appsv1.StatefulSet{} },
			podSpec: func(o object) *corev1.PodSpec { return &o.(*appsv1.StatefulSet).Spec.Template.Spec },
			template: func(o object) (*corev1.PodTemplateSpec, **metav1.LabelSelector) {
				ss := o.(*appsv1.StatefulSet)
				return &ss.Spec.Template, &ss.Spec.Selector
			},
			pods: func(o object, _ int) int { return replicasInRange(o.(*appsv1.StatefulSet).Spec.Replicas) },
			check: func(o object, p *field.Path) field.ErrorList {
				return validateReplicas(o.(*appsv1.StatefulSet).Spec.Replicas, p.Child("spec", "replicas"))
			}},
		"DaemonSet": {apiVersion: "apps/v1", namespaced: true, new: func() object { return &appsv1.DaemonSet{} },
			podSpec: func(o object) *corev1.PodSpec { return &o.(*appsv1.DaemonSet).Spec.Template.Spec },
			template: func(o object) (*corev1.PodTemplateSpec, **metav1.LabelSelector) {
				ds := o.(*appsv1.DaemonSet)
				return &ds.Spec.Template, &ds.Spec.Selector
			},
			pods: func(_ object, nodes int) int { return nodes }},
		"Job": {apiVersion: "batch/v1", namespaced: true, new: func() object { return &batchv1.Job{} },
			podSpec: func(o object) *corev1.PodSpec { return &o.(*batchv1.Job).Spec.Template.Spec },
			// The Job controller runs at most max(completions, parallelism)
			// pods that succeed; failed ones are retried up to the backoff
			// limit, which MaxPods does not count.
			pods: func(o object, _ int) int {
				j := o.(*batchv1.Job)
				return max(replicasInRange(j.Spec.Completions), replicasInRange(j.Spec.Parallelism))
			},
			check: checkJob, defaults: defaultJob},
		"Service": {apiVersion: "v1", namespaced: true, new: func() object { return &corev1.Service{} },
			check: func(o object, p *field.Path) field.ErrorList {
				return validateServiceSpec(&o.(*corev1.Service).Spec, p.Child("spec"))
			}},
	}
	supportedKinds = []string{"Pod", "ReplicaSet", "Deployment", "StatefulSet", "Job", "DaemonSet", "Service"}
)

// jobRestartPolicies are the restart policies the API server accepts for a
// Job's pods.
var jobRestartPolicies = []string{string(corev1.RestartPolicyNever), string(corev1.RestartPolicyOnFailure)}

func checkJob(o object, p *field.Path) field.ErrorList {
	j := o.(*batchv1.Job)
	errs := validateReplicas(j.Spec.Completions, p.Child("spec", "completions"))
	errs = append(errs, validateReplicas(j.Spec.Parallelism, p.Child("spec", "parallelism"))...)
	switch rp := j.Spec.Template.Spec.RestartPolicy; rp {
	case "", corev1.RestartPolicyNever, corev1.RestartPolicyOnFailure:
	default:
		errs = append(errs, field.NotSupported(p.Child("spec", "template", "spec", "restartPolicy"), rp, jobRestartPolicies))
	}
	return errs
}

// defaultJob: the API server refuses a Job whose pods restart Always, the
// pod default: a Job that names no policy gets Never.
func defaultJob(o object) {
	if spec := &o.(*batchv1.Job).Spec.Template.Spec; spec.RestartPolicy == "" {
		spec.RestartPolicy = corev1.RestartPolicyNever
	}
}

// defaultTemplate makes a template without labels carry app=<name>, and a
// missing selector select the template's labels.
func defaultTemplate(name string, template *corev1.PodTemplateSpec, selector **metav1.LabelSelector) {
	if len(template.Labels) == 0 {
		template.Labels = map[string]string{"app": name}
	}
	if *selector == nil {
		*selector = &metav1.LabelSelector{MatchLabels: maps.Clone(template.Labels)}
	}
}

// defaultSchedulerName gives the pods of spec the scheduler name, unless
// they name one or are bound already.
func defaultSchedulerName(spec *corev1.PodSpec, schedulerName string) {
	if spec.SchedulerName == "" && spec.NodeName == "" {
		spec.SchedulerName = schedulerName
	}
}

// SnapshotSchedulerAnnotation records, on a pending pod `playground
// snapshot` took, the scheduler it named in its cluster; the file's pod
// names none, as the replay's profiles have names of their own.
const SnapshotSchedulerAnnotation = "playground.adminsched.io/scheduler-name"

// schedulerFor is the profile a pod that names none gets: the one of
// SnapshotSchedulerAnnotation if schedulerNames has it, else the first.
func schedulerFor(o metav1.Object, schedulerNames []string) string {
	if name := o.GetAnnotations()[SnapshotSchedulerAnnotation]; slices.Contains(schedulerNames, name) {
		return name
	}
	return schedulerNames[0]
}

// replicasInRange is the number of pods spec.replicas makes (1 when unset),
// or 0 when out of range: that is reported on the field itself.
func replicasInRange(replicas *int32) int {
	r := int(ptr.Deref(replicas, 1))
	if r < 0 || r > MaxPods {
		return 0
	}
	return r
}
