"""Acting on workflows outside the admin: the template tags' fragments and the view their
forms post to (docs/outside-the-admin.md). The rooms:

- ``access``: who may see and move a record, by Django's permissions; finding the
  record a URL names;
- ``engine.offers``: the transitions offered, their forms, the signed token each form posts;
- ``fragments``: rendering actions, history, deadlines and the inbox;
- ``form_views``: the POST view (``django_workflow.urls``).

The tags themselves are ``django_workflow.templatetags.workflow``.
"""
