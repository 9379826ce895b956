import HTTPServer

/// The Supabase-compatible surface: `/auth/v1` (GoTrue), `/rest/v1` (PostgREST) and `/storage/v1`.
public enum SupabaseRoutes {
    public static func routes(_ context: SupabaseContext) -> [Route] {
        GoTrueRoutes(context: context).routes + RestRoutes(context: context).routes
            + StorageRoutes(context: context).routes
    }
}
