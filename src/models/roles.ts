/**
 * Staff roles as Mastodon's UserRole with its default roles (config/roles.yml): Rookery keeps
 * the four by name in users.role, and answers with Mastodon's ids, positions and permission
 * bitmask, so that clients and moderation tools read them as they read Mastodon's. A role acts
 * on another only when it ranks higher (UserRole#overrides?): nobody acts on an owner, an owner
 * on nobody of its own rank, and moderators handle reports and limit or suspend users but
 * manage neither roles, nor passwords, nor federation.
 */

export const ROLES = ["user", "moderator", "admin", "owner"] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === "string" && (ROLES as readonly string[]).includes(value);
}

/** UserRole::FLAGS. */
export const PERMISSIONS = {
  administrator: 1 << 0,
  view_devops: 1 << 1,
  view_audit_log: 1 << 2,
  view_dashboard: 1 << 3,
  manage_reports: 1 << 4,
  manage_federation: 1 << 5,
  manage_settings: 1 << 6,
  manage_blocks: 1 << 7,
  manage_taxonomies: 1 << 8,
  manage_appeals: 1 << 9,
  manage_users: 1 << 10,
  manage_invites: 1 << 11,
  manage_rules: 1 << 12,
  manage_announcements: 1 << 13,
  manage_custom_emojis: 1 << 14,
  manage_webhooks: 1 << 15,
  invite_users: 1 << 16,
  manage_roles: 1 << 17,
  manage_user_access: 1 << 18,
  delete_user_data: 1 << 19,
  view_feeds: 1 << 20,
  invite_bypass_approval: 1 << 21,
  manage_email_subscriptions: 1 << 22,
} as const;

export type Permission = keyof typeof PERMISSIONS;

const ALL = Object.values(PERMISSIONS).reduce((a, b) => a | b, 0);
const of = (...names: Permission[]) => names.reduce((mask, n) => mask | PERMISSIONS[n], 0);

/** The everyone role's permissions (UserRole::Flags::DEFAULT), which every role has too. */
const EVERYONE = of("invite_users");

interface RoleDefinition {
  /** Mastodon's: -99 is the everyone role; 1, 2, 3 the seeded Moderator, Admin and Owner. */
  id: string;
  name: string;
  position: number;
  permissions: number;
  highlighted: boolean;
}

const DEFINITIONS: Record<Role, RoleDefinition> = {
  user: { id: "-99", name: "", position: -1, permissions: EVERYONE, highlighted: false },
  moderator: {
    id: "1",
    name: "Moderator",
    position: 10,
    permissions: of("invite_users", "view_dashboard", "view_audit_log", "view_feeds", "manage_users", "manage_reports", "manage_taxonomies"),
    highlighted: true,
  },
  admin: {
    id: "2",
    name: "Admin",
    position: 100,
    permissions: of(
      "invite_users",
      "view_dashboard",
      "view_audit_log",
      "view_feeds",
      "manage_users",
      "manage_user_access",
      "delete_user_data",
      "manage_reports",
      "manage_taxonomies",
      "manage_federation",
      "manage_settings",
      "manage_blocks",
      "manage_appeals",
      "manage_rules",
      "manage_invites",
      "manage_announcements",
      "manage_custom_emojis",
      "manage_webhooks",
      "manage_roles",
    ),
    highlighted: true,
  },
  owner: { id: "3", name: "Owner", position: 1000, permissions: of("administrator"), highlighted: true },
};

/** The stored role, read leniently: anything unknown is an ordinary user. */
export function roleOf(value: string | null | undefined): Role {
  return isRole(value) ? value : "user";
}

/** UserRole#computed_permissions: the everyone role's and its own; an administrator has all. */
export function permissionsOf(role: Role): number {
  const own = DEFINITIONS[role].permissions | EVERYONE;
  return own & PERMISSIONS.administrator ? ALL : own;
}

/** UserRole#can?: any of these. */
export function can(role: Role, ...anyOf: Permission[]): boolean {
  const mask = permissionsOf(role);
  return anyOf.some((p) => (mask & PERMISSIONS[p]) === PERMISSIONS[p]);
}

/** UserRole#overrides?: ranks strictly above. */
export function overrides(role: Role, other: Role): boolean {
  return DEFINITIONS[role].position > DEFINITIONS[other].position;
}

/** Staff: a role that can handle reports (Mastodon's `staff` filter: UserRole.that_can(:manage_reports)). */
export function isStaff(role: Role): boolean {
  return can(role, "manage_reports");
}

/** What REST::RoleSerializer shows of a role. */
export interface RoleEntity {
  id: string;
  name: string;
  permissions: string;
  color: string;
  highlighted: boolean;
}

export function roleEntity(role: Role): RoleEntity {
  const d = DEFINITIONS[role];
  return { id: d.id, name: d.name, permissions: String(permissionsOf(role)), color: "", highlighted: d.highlighted };
}

/** The role by Mastodon's id (the API's role_ids) or by name. */
export function roleNamed(idOrName: string): Role | undefined {
  const key = idOrName.trim().toLowerCase();
  return ROLES.find((r) => r === key || DEFINITIONS[r].id === key);
}
