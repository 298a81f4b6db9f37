"""Protobuf <-> model conversion for the SkillRouter API, one module per group of calls:
``routing`` (Route, Explain), ``index`` (ListSkills, GetIndexInfo, Reindex), ``activation``
(Activate, ListResources, ReadResource, ValidateArguments), ``feedback`` (Feedback) and
``learning`` (SkillStats, ListExamples, PurgeExamples); ``paths`` applies the path view of
``router.door.path_policy`` to any answer.

Plain field copies, no I/O; the only checks are protobuf concerns (an enum number this server
does not know, a negative list cap), each an InvalidRequest.
"""
