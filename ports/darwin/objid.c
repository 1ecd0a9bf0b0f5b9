/* objid.c - the macOS port's object identity (src/port.h object_id, as
 * src/os.h's pf_os_object_id answers): which VM object a shared mapping
 * maps, and where in it a word lies, for shared futexes outside regions
 * (doc/shared-futexes.md).  XNU's own process-shared ulocks are keyed the
 * same way (bsd/kern/sys_ulock.c uaddr_findobj: vm_map_page_info, flavor
 * VM_PAGE_INFO_BASIC, key (object_id, offset)); user space asks the same
 * question with two Mach calls (XNU osfmk/mach/mach_vm.defs, headers
 * <mach/mach_vm.h>, <mach/vm_region.h>):
 *
 *   mach_vm_region(VM_REGION_BASIC_INFO_64)  the region holding p, or the
 *        next one (then p is unmapped: -EFAULT); its protection (neither
 *        read nor write: -EFAULT; read-only private memory whose objects
 *        have no external pager, i.e. no file, asked again with
 *        VM_REGION_EXTENDED_INFO: -EFAULT, Linux's read-only anonymous
 *        page) and inheritance: VM_INHERIT_SHARE is what
 *        mmap gives MAP_SHARED mappings, anonymous or of a file, and what
 *        POSIX and SysV shared memory are mapped with (bsd/kern/kern_mman.c,
 *        posix_shm.c, sysv_shm.c); anything else is private (0: keyed by
 *        address).  share_mode cannot tell: a shared region mapped by one
 *        process reads SM_PRIVATE;
 *   mach_vm_page_info(VM_PAGE_INFO_BASIC)    object_id, a hash of the VM
 *        object holding the page (SHA-256 of its address with a salt drawn
 *        once per boot: equal in every process), and offset, the byte
 *        offset of p in that object.  An entry never faulted has no object
 *        and reads 0: the word is read first (guarded, src/os.h).  A page
 *        still in a shadow's backing object (depth > 0: a fork may insert a
 *        shadow above a shared object) is named by the backing object until
 *        a write copies it up, so the word is written unchanged (an atomic
 *        add of 0) and asked again: the key is then the shared top object's,
 *        as every later query finds it.
 *
 * Limits (doc/shared-futexes.md): a process that set the sysctl
 * vm.self_region_footprint reads made-up ids; a read-only shared mapping
 * of a shadowed page keeps the backing object's id until some other
 * mapping writes it; object_id is 64 bits of a hash, not the address.
 *
 * Built twice, like park.c: for macOS, and over tests/shims/darwin/, whose
 * model of the two calls answers from Linux's /proc/self/maps. */
#include "os.h"
#include "port.h"

#include <string.h>

#ifdef PF_SHIM
# include "shim.h"
# define PF_DARWIN_OBJID pf_darwin_shim_object_id
#else
# include <mach/mach.h>
# ifdef HAVE_MACH_MACH_VM_H
#  include <mach/mach_vm.h>
# else
/* The SDK's MIG header (osfmk/mach/mach_vm.defs), missing from some
 * toolchains' copies; libSystem exports both calls. */
kern_return_t mach_vm_region(vm_map_t target_task, mach_vm_address_t *address, mach_vm_size_t *size,
                             vm_region_flavor_t flavor, vm_region_info_t info,
                             mach_msg_type_number_t *infoCnt, mach_port_t *object_name);
kern_return_t mach_vm_page_info(vm_map_t target_task, mach_vm_address_t address,
                                vm_page_info_flavor_t flavor, vm_page_info_t info,
                                mach_msg_type_number_t *infoCnt);
# endif
# define PF_DARWIN_OBJID pf_darwin_object_id
#endif

/* The device half of a key: no device names a VM object, so one constant
 * marks the ids as Mach's ("mach" in ASCII). */
#define PF_DARWIN_DEV 0x6d616368u

int PF_DARWIN_OBJID(const void *p, struct pf_os_objid *id);

static int
pf_darwin_page(const void *p, vm_page_info_basic_data_t *pi)
{
  mach_msg_type_number_t cnt = VM_PAGE_INFO_BASIC_COUNT;
  memset(pi, 0, sizeof *pi);
  return mach_vm_page_info(mach_task_self(), (mach_vm_address_t)(uintptr_t)p, VM_PAGE_INFO_BASIC,
                           (vm_page_info_t)pi, &cnt) == KERN_SUCCESS ? 0 : -1;
}

int
PF_DARWIN_OBJID(const void *p, struct pf_os_objid *id)
{
  mach_vm_address_t a = (mach_vm_address_t)(uintptr_t)p;
  mach_vm_size_t size = 0;
  vm_region_basic_info_data_64_t bi;
  vm_page_info_basic_data_t pi;
  mach_msg_type_number_t cnt = VM_REGION_BASIC_INFO_COUNT_64;
  mach_port_t objname = MACH_PORT_NULL;
  kern_return_t kr;
  uint32_t v;

  memset(id, 0, sizeof *id);
  memset(&bi, 0, sizeof bi);
  kr = mach_vm_region(mach_task_self(), &a, &size, VM_REGION_BASIC_INFO_64, (vm_region_info_t)&bi,
                      &cnt, &objname);
  if (objname != MACH_PORT_NULL)
    mach_port_deallocate(mach_task_self(), objname);
  if (kr == KERN_INVALID_ADDRESS)
    return -EFAULT;                          /* nothing at or above p */
  if (kr != KERN_SUCCESS)
    return -ENOSYS;
  if (a > (mach_vm_address_t)(uintptr_t)p)
    return -EFAULT;                          /* the next region: p is in a hole */
  if (!(bi.protection & (VM_PROT_READ | VM_PROT_WRITE)))
    return -EFAULT;
  if (bi.inheritance != VM_INHERIT_SHARE) {
    /* Private: keyed by address; read-only anonymous memory (no object
     * in its chain has an external pager: no file) cannot be keyed (Linux's
     * get_futex_key refuses a read-only anonymous page). */
    if (!(bi.protection & VM_PROT_WRITE)) {
      vm_region_extended_info_data_t ei;
      a = (mach_vm_address_t)(uintptr_t)p;
      cnt = VM_REGION_EXTENDED_INFO_COUNT;
      memset(&ei, 0, sizeof ei);
      objname = MACH_PORT_NULL;
      kr = mach_vm_region(mach_task_self(), &a, &size, VM_REGION_EXTENDED_INFO, (vm_region_info_t)&ei,
                          &cnt, &objname);
      if (objname != MACH_PORT_NULL)
        mach_port_deallocate(mach_task_self(), objname);
      if (kr == KERN_SUCCESS && a <= (mach_vm_address_t)(uintptr_t)p && !ei.external_pager)
        return -EFAULT;
    }
    return 0;
  }
  if (pf_os_word_read(p, &v) < 0)            /* an object for the entry, the page in */
    return -EFAULT;
  if (pf_darwin_page(p, &pi) < 0)
    return -ENOSYS;
  if (pi.depth > 0 && (bi.protection & VM_PROT_WRITE) && pf_os_word_touch((uint32_t *)(uintptr_t)p) == 0
      && pf_darwin_page(p, &pi) < 0)
    return -ENOSYS;
  if (pi.object_id == 0)
    return PF_OBJID_NONE;                    /* shared, and no object named */
  id->dev = PF_DARWIN_DEV;
  id->ino = (uint64_t)pi.object_id;
  id->off = (uint64_t)pi.offset;
  return 1;
}
