interface TableHeadProps {
  columns: readonly string[]
  /** A last column of row buttons, named for screen readers only. */
  actions?: boolean
}

/** A table's header row: one column header per name. */
export function TableHead({ columns, actions = false }: TableHeadProps) {
  return (
    <thead>
      <tr>
        {columns.map((column) => (
          <th scope="col" key={column}>
            {column}
          </th>
        ))}
        {actions && (
          <th scope="col">
            <span class="sr-only">Actions</span>
          </th>
        )}
      </tr>
    </thead>
  )
}
