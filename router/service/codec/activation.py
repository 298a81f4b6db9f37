"""Protobuf conversions for activation: Activate, ListResources, ReadResource and
ValidateArguments.

Plain field copies between the Activator's records and the wire messages; no checks, no I/O.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from router.activation.activator import Activation, Resource, ResourceList
from router.v1 import router_pb2 as pb

if TYPE_CHECKING:
    from router.activation.arguments import ValidationResult


def activation_to_proto(activation: Activation) -> pb.ActivateResponse:
    """Convert an Activation (``content`` is empty when the skill was already active)."""
    return pb.ActivateResponse(
        content=activation.content,
        resources=list(activation.resources),
        resources_truncated=activation.resources_truncated,
        skill_dir=activation.skill_dir,
        already_active=activation.already_active,
        catalog=activation.catalog,
    )


def resource_to_proto(resource: Resource) -> pb.ReadResourceResponse:
    """Convert one bundled file."""
    return pb.ReadResourceResponse(content=resource.content, size=resource.size,
                                   media_type=resource.media_type)


def resource_list_to_proto(listing: ResourceList) -> pb.ListResourcesResponse:
    """Convert a skill's file list (ListResources)."""
    return pb.ListResourcesResponse(resources=list(listing.files),
                                    resources_truncated=listing.truncated,
                                    skill_dir=listing.skill_dir)


def validation_to_proto(result: ValidationResult) -> pb.ValidateArgumentsResponse:
    """Convert an argument check: normalised arguments when valid, the errors otherwise."""
    if not result.ok:
        return pb.ValidateArgumentsResponse(
            valid=False,
            errors=[pb.ArgumentError(**error.to_dict()) for error in result.errors],
        )
    return pb.ValidateArgumentsResponse(
        valid=True, arguments_json=json.dumps(result.arguments, ensure_ascii=False))
