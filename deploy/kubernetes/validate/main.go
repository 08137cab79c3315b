// Command validate checks the Kubernetes manifests of deploy/kubernetes offline, with no
// cluster: every document is decoded strictly into the Kubernetes API's own Go types
// (k8s.io/api, from which the API server's OpenAPI schema is generated), so an unknown
// field, a misspelt key or a wrong type fails; then the cross-references that a schema
// cannot see are checked (selectors, ports, grace periods, the key Secret's mount).
//
//	go run ./deploy/kubernetes/validate deploy/kubernetes/*.yaml
//
// It prints one line per document and exits 1 on the first file with a problem.
package main

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"
)

// kustomization is the part of kustomize's Kustomization these manifests use.
type kustomization struct {
	APIVersion string   `json:"apiVersion"`
	Kind       string   `json:"kind"`
	Resources  []string `json:"resources"`
}

type manifests struct {
	deployments   []*appsv1.Deployment
	services      []*corev1.Service
	pdbs          []*policyv1.PodDisruptionBudget
	hpas          []*autoscalingv2.HorizontalPodAutoscaler
	secrets       []*corev1.Secret
	kustomization *kustomization
	files         map[string]bool
}

var documentSeparator = regexp.MustCompile(`(?m)^---\s*$`)

func decode(m *manifests, file string, doc []byte) (string, error) {
	var head struct {
		APIVersion string `json:"apiVersion"`
		Kind       string `json:"kind"`
	}
	if err := yaml.Unmarshal(doc, &head); err != nil {
		return "", err
	}
	switch head.APIVersion + " " + head.Kind {
	case "apps/v1 Deployment":
		return decodeInto(doc, &m.deployments)
	case "v1 Service":
		return decodeInto(doc, &m.services)
	case "policy/v1 PodDisruptionBudget":
		return decodeInto(doc, &m.pdbs)
	case "autoscaling/v2 HorizontalPodAutoscaler":
		return decodeInto(doc, &m.hpas)
	case "v1 Secret":
		return decodeInto(doc, &m.secrets)
	case "kustomize.config.k8s.io/v1beta1 Kustomization":
		k := &kustomization{}
		m.kustomization = k
		return filepath.Base(file), yaml.UnmarshalStrict(doc, k)
	}
	return "", fmt.Errorf("unexpected apiVersion %q kind %q", head.APIVersion, head.Kind)
}

// named is what every Kubernetes object has: its metadata's name.
type named interface{ GetName() string }

// decodeInto decodes doc strictly into a new T and appends it to list.
func decodeInto[T any, P interface {
	*T
	named
}](doc []byte, list *[]P) (string, error) {
	object := P(new(T))
	if err := yaml.UnmarshalStrict(doc, object); err != nil {
		return "", err
	}
	*list = append(*list, object)
	return object.GetName(), nil
}

func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// flagValue returns the value of --name=VALUE or --name VALUE in args, and whether present.
func flagValue(args []string, name string) (string, bool) {
	for i, arg := range args {
		if arg == "--"+name {
			if i+1 < len(args) && !strings.HasPrefix(args[i+1], "--") {
				return args[i+1], true
			}
			return "", true
		}
		if value, ok := strings.CutPrefix(arg, "--"+name+"="); ok {
			return value, true
		}
	}
	return "", false
}

func checkDeployment(m *manifests, d *appsv1.Deployment) []error {
	var errs []error
	fail := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("deployment %s: "+format, append([]any{d.Name}, args...)...))
	}
	pod := d.Spec.Template
	if d.Spec.Selector == nil || !matches(d.Spec.Selector.MatchLabels, pod.Labels) {
		fail("spec.selector does not select the pod template's labels")
	}
	for _, c := range pod.Spec.Containers {
		ports := map[int32]bool{}
		names := map[string]bool{}
		for _, p := range c.Ports {
			ports[p.ContainerPort] = true
			names[p.Name] = true
		}
		for name, probe := range map[string]*corev1.Probe{"readinessProbe": c.ReadinessProbe, "livenessProbe": c.LivenessProbe} {
			if probe == nil || probe.GRPC == nil {
				fail("container %s: %s must be a native gRPC probe", c.Name, name)
			} else if !ports[probe.GRPC.Port] {
				fail("container %s: %s probes port %d, which the container does not declare", c.Name, name, probe.GRPC.Port)
			}
		}
		if grace, ok := flagValue(c.Args, "grace-ms"); ok {
			ms, err := strconv.Atoi(grace)
			if err != nil {
				fail("container %s: --grace-ms %q is not a number", c.Name, grace)
			}
			var preStop int64
			if c.Lifecycle != nil && c.Lifecycle.PreStop != nil && c.Lifecycle.PreStop.Sleep != nil {
				preStop = c.Lifecycle.PreStop.Sleep.Seconds
			}
			total := pod.Spec.TerminationGracePeriodSeconds
			if total == nil || *total*1000 < preStop*1000+int64(ms) {
				fail("terminationGracePeriodSeconds must cover preStop (%d s) + --grace-ms (%d ms)", preStop, ms)
			}
		} else {
			fail("container %s: no --grace-ms: the drain is not bounded", c.Name)
		}
		if keys, ok := flagValue(c.Args, "keys"); ok {
			mounted := false
			for _, mount := range c.VolumeMounts {
				if strings.HasPrefix(keys, strings.TrimSuffix(mount.MountPath, "/")+"/") {
					mounted = true
					if mount.SubPath != "" {
						fail("container %s: the key file is mounted with subPath, which never sees Secret updates", c.Name)
					}
				}
			}
			if !mounted {
				fail("container %s: --keys %s is under no volume mount", c.Name, keys)
			}
		}
		for _, svc := range m.services {
			if !matches(svc.Spec.Selector, pod.Labels) {
				continue
			}
			for _, p := range svc.Spec.Ports {
				if p.TargetPort.StrVal != "" && !names[p.TargetPort.StrVal] {
					fail("service %s: targetPort %q is not a port name of container %s", svc.Name, p.TargetPort.StrVal, c.Name)
				}
			}
		}
	}
	return errs
}

func check(m *manifests) []error {
	var errs []error
	if len(m.deployments) != 1 {
		return []error{fmt.Errorf("expected one Deployment, found %d", len(m.deployments))}
	}
	d := m.deployments[0]
	errs = append(errs, checkDeployment(m, d)...)
	labels := d.Spec.Template.Labels
	for _, s := range m.services {
		if !matches(s.Spec.Selector, labels) {
			errs = append(errs, fmt.Errorf("service %s selects no pod of deployment %s", s.Name, d.Name))
		}
	}
	for _, p := range m.pdbs {
		if p.Spec.Selector == nil || !matches(p.Spec.Selector.MatchLabels, labels) {
			errs = append(errs, fmt.Errorf("poddisruptionbudget %s selects no pod of deployment %s", p.Name, d.Name))
		}
	}
	for _, h := range m.hpas {
		if h.Spec.ScaleTargetRef.Kind != "Deployment" || h.Spec.ScaleTargetRef.Name != d.Name {
			errs = append(errs, fmt.Errorf("horizontalpodautoscaler %s does not scale deployment %s", h.Name, d.Name))
		}
		if d.Spec.Replicas != nil && h.Spec.MinReplicas != nil && *h.Spec.MinReplicas > *d.Spec.Replicas {
			errs = append(errs, fmt.Errorf("horizontalpodautoscaler %s: minReplicas above the deployment's replicas", h.Name))
		}
	}
	for _, v := range d.Spec.Template.Spec.Volumes {
		if v.Secret == nil {
			continue
		}
		found := len(m.secrets) == 0 // without the example Secret, nothing to compare with
		for _, s := range m.secrets {
			found = found || s.Name == v.Secret.SecretName
		}
		if !found {
			errs = append(errs, fmt.Errorf("volume %s mounts Secret %s, which no manifest describes", v.Name, v.Secret.SecretName))
		}
	}
	if m.kustomization != nil {
		for _, r := range m.kustomization.Resources {
			if !m.files[r] {
				errs = append(errs, fmt.Errorf("kustomization lists %s, which was not given", r))
			}
		}
	}
	return errs
}

func run(files []string) error {
	m := &manifests{files: map[string]bool{}}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			return err
		}
		m.files[filepath.Base(file)] = true
		for i, doc := range documentSeparator.Split(string(raw), -1) {
			if len(bytes.TrimSpace([]byte(doc))) == 0 {
				continue
			}
			name, err := decode(m, file, []byte(doc))
			if err != nil {
				return fmt.Errorf("%s (document %d): %w", file, i+1, err)
			}
			fmt.Printf("ok  %s: %s\n", file, name)
		}
	}
	return errors.Join(check(m)...)
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: validate FILE.yaml...")
		os.Exit(2)
	}
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "validate:", err)
		os.Exit(1)
	}
}
