// k8s-job-check decodes Kubernetes Job manifests strictly into the Kubernetes Go
// API types (k8s.io/api/batch/v1, as kubectl's server-side field validation
// would: unknown or duplicate fields are errors) and prints, per Job, what a test
// needs to run its pods' commands: completions, completion mode, image, command,
// args and volume mounts, as one JSON object per line.
//
//	go run . docs/examples/k8s-indexed-job.yaml
package main

import (
	"encoding/json"
	"fmt"
	"os"

	batchv1 "k8s.io/api/batch/v1"
	"sigs.k8s.io/yaml"
)

type mount struct {
	Name      string `json:"name"`
	MountPath string `json:"mountPath"`
	// ConfigMap or PersistentVolumeClaim the volume comes from.
	Source string `json:"source"`
}

type summary struct {
	Name           string   `json:"name"`
	CompletionMode string   `json:"completionMode"`
	Completions    int32    `json:"completions"`
	Parallelism    int32    `json:"parallelism"`
	Image          string   `json:"image"`
	Command        []string `json:"command"`
	Args           []string `json:"args"`
	Mounts         []mount  `json:"mounts"`
}

func check(path string) (*summary, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var job batchv1.Job
	if err := yaml.UnmarshalStrict(data, &job); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if job.APIVersion != "batch/v1" || job.Kind != "Job" {
		return nil, fmt.Errorf("%s: apiVersion/kind %q/%q, want batch/v1 Job", path, job.APIVersion, job.Kind)
	}
	s := &job.Spec
	if s.CompletionMode == nil || s.Completions == nil || s.Parallelism == nil {
		return nil, fmt.Errorf("%s: completionMode, completions and parallelism must be set", path)
	}
	pod := s.Template.Spec
	if len(pod.Containers) != 1 {
		return nil, fmt.Errorf("%s: %d containers, want 1", path, len(pod.Containers))
	}
	c := pod.Containers[0]
	sources := map[string]string{}
	for _, v := range pod.Volumes {
		switch {
		case v.ConfigMap != nil:
			sources[v.Name] = "configMap:" + v.ConfigMap.Name
		case v.PersistentVolumeClaim != nil:
			sources[v.Name] = "persistentVolumeClaim:" + v.PersistentVolumeClaim.ClaimName
		default:
			return nil, fmt.Errorf("%s: volume %q is neither a configMap nor a claim", path, v.Name)
		}
	}
	out := &summary{
		Name:           job.Name,
		CompletionMode: string(*s.CompletionMode),
		Completions:    *s.Completions,
		Parallelism:    *s.Parallelism,
		Image:          c.Image,
		Command:        c.Command,
		Args:           c.Args,
	}
	for _, m := range c.VolumeMounts {
		src, ok := sources[m.Name]
		if !ok {
			return nil, fmt.Errorf("%s: volume mount %q names no volume", path, m.Name)
		}
		out.Mounts = append(out.Mounts, mount{Name: m.Name, MountPath: m.MountPath, Source: src})
	}
	return out, nil
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: k8s-job-check JOB.yaml...")
		os.Exit(2)
	}
	for _, p := range os.Args[1:] {
		s, err := check(p)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		b, _ := json.Marshal(s)
		fmt.Println(string(b))
	}
}
