"""What only the web needs: middleware, forms and their widgets, and the login throttling."""
