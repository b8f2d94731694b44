package main

// Leader election among controller replicas: a Lease in payoutd's own namespace (kustomize
// puts the namespace "system" of config/ into payout-system). Generated into the controllers'
// role (config/rbac/controller/role.yaml): the facade does not elect.
//
// +kubebuilder:rbac:groups=coordination.k8s.io,resources=leases,verbs=get;list;watch;create;update;patch;delete,namespace=system
