"""Sign-in on the Marquez web UI: the load balancer's authenticate-cognito or authenticate-oidc action.

Only the web route goes through it; ``/api/*`` (and the gateway's ``POST /api/v1/lineage``, which
has its own Bearer key) keep going straight to their targets. The load balancer talks to the
identity provider over HTTPS, so the actions open its security group's egress on 443
(``allow_https_outbound``, CDK's default). The IdP's client must allow the callback URL
``https://<marquez.domain_name>/oauth2/idpresponse`` (ELB user guide, "Authenticate users").
"""

from __future__ import annotations

from aws_cdk import SecretValue
from aws_cdk import aws_cognito as cognito
from aws_cdk import aws_elasticloadbalancingv2 as elbv2
from aws_cdk import aws_elasticloadbalancingv2_actions as elb_actions
from constructs import Construct

from emr_lineage.settings.operations import CognitoUiAuth, OidcUiAuth


def sign_in_then(
    scope: Construct, auth: CognitoUiAuth | OidcUiAuth | None, next_action: elbv2.ListenerAction
) -> elbv2.ListenerAction:
    """``next_action`` behind the configured sign-in (unchanged when ``auth`` is None)."""
    if auth is None:
        return next_action
    if isinstance(auth, CognitoUiAuth):
        user_pool = cognito.UserPool.from_user_pool_arn(scope, "UserPool", auth.user_pool_arn)
        return elb_actions.AuthenticateCognitoAction(
            next=next_action,
            user_pool=user_pool,
            user_pool_client=cognito.UserPoolClient.from_user_pool_client_id(
                scope, "UserPoolClient", auth.user_pool_client_id
            ),
            user_pool_domain=cognito.UserPoolDomain.from_domain_name(scope, "UserPoolDomain", auth.user_pool_domain),
        )
    return elbv2.ListenerAction.authenticate_oidc(
        next=next_action,
        issuer=auth.issuer,
        authorization_endpoint=auth.authorization_endpoint,
        token_endpoint=auth.token_endpoint,
        user_info_endpoint=auth.user_info_endpoint,
        client_id=auth.client_id,
        # A dynamic reference resolved by CloudFormation at deploy time: never in the template.
        client_secret=SecretValue.secrets_manager(auth.client_secret_arn),
    )
